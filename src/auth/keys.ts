/**
 * The JWT public key of HOROLOGIUM_JWT_PUBLIC_KEY and the one algorithm family it may verify:
 * RS256 for RSA, ES256 for P-256, EdDSA for Ed25519. Config calls it too, so a bad key stops start-up.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

export interface PublicKey {
  key: KeyObject;
  algorithms: string[];
}

export function jwtPublicKey(pem: string): PublicKey {
  const key = createPublicKey(pem);
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { key, algorithms: ['RS256'] };
    case 'ec':
      if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('an EC key must be on P-256 (ES256)');
      return { key, algorithms: ['ES256'] };
    case 'ed25519':
      return { key, algorithms: ['EdDSA', 'Ed25519'] };
    default:
      throw new Error(`unsupported key type ${key.asymmetricKeyType ?? 'unknown'} (RSA, P-256 or Ed25519)`);
  }
}
