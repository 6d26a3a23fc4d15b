/**
 * Turns a bearer token into a Principal: static tokens (HOROLOGIUM_TOKENS) compared in constant
 * time, and JWTs verified with `jose` (HS256 with HOROLOGIUM_JWT_SECRET; RS256, ES256 or EdDSA with
 * HOROLOGIUM_JWT_PUBLIC_KEY). A JWT needs `exp`; its scopes are in `scope` (space-separated, RFC 9068)
 * or `scp` (a string or an array, as Okta and Entra write it), and its `sessions` claim is an array
 * of patterns. Scope names the server does not know are ignored: a token from an identity provider
 * carries scopes for many services, and a resource server checks only for those it needs. Only the algorithms the configured keys allow are accepted,
 * so `alg: none` and HS256-signed-with-the-public-key tokens are refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
// jose's subpaths, not its index: the index loads ~45 modules (JWE, JWKS, key generation) at start-up.
import { decodeProtectedHeader } from 'jose/decode/protected_header';
import * as joseErrors from 'jose/errors';
import { jwtVerify } from 'jose/jwt/verify';
import { jwtPublicKey, type PublicKey } from './keys.js';
import type { Principal, StaticToken } from './principal.js';
import { isScope, SCOPE_LIST } from './scopes.js';

/** Where tokens come from (HOROLOGIUM_TOKENS, HOROLOGIUM_JWT_SECRET, HOROLOGIUM_JWT_PUBLIC_KEY). */
export interface AuthSettings {
  tokens: StaticToken[];
  jwtSecret?: string;
  jwtPublicKey?: string;
  /** True when no token source is configured: every request is allowed (loopback only). */
  open: boolean;
}

/**
 * Why a request was refused, as `horologium_auth_failures_total` labels it: no token, one that is not
 * even shaped like a token, one that does not verify, an expired one (all 401 / 4001), or a valid
 * token that does not allow what was asked (403 / 4003 / a FORBIDDEN error frame).
 */
export type AuthFailureKind = 'missing' | 'malformed' | 'invalid' | 'expired' | 'forbidden';

/** A missing, malformed, invalid or expired token: 401 on HTTP, 4001 on the stream. */
export class AuthError extends Error {
  override name = 'AuthError';

  constructor(
    readonly kind: Exclude<AuthFailureKind, 'forbidden'>,
    message: string,
  ) {
    super(message);
  }
}

const digest = (token: string) => createHash('sha256').update(token).digest();
const tokenId = (token: string) => `t:${digest(token).toString('base64url').slice(0, 16)}`;

export class Authenticator {
  private readonly statics: Array<{ digest: Buffer; principal: Principal }>;
  private readonly secret?: Uint8Array;
  private readonly publicKey?: PublicKey;

  constructor(auth: AuthSettings) {
    this.statics = auth.tokens.map((t) => ({
      digest: digest(t.token),
      principal: { id: tokenId(t.token), scopes: new Set(t.scopes), claimed: t.scopes, sessions: t.sessions },
    }));
    if (auth.jwtSecret) this.secret = new TextEncoder().encode(auth.jwtSecret);
    if (auth.jwtPublicKey) this.publicKey = jwtPublicKey(auth.jwtPublicKey);
  }

  /** False when no token source is configured: the server runs open. */
  get enabled(): boolean {
    return this.statics.length > 0 || this.secret !== undefined || this.publicKey !== undefined;
  }

  async verify(token: string): Promise<Principal> {
    if (token.length === 0 || token.length > 8192) throw new AuthError('malformed', 'the token is malformed');
    const candidate = digest(token);
    // Every static token is compared, equal-length digests in constant time, whatever matches.
    let found: Principal | undefined;
    for (const s of this.statics) if (timingSafeEqual(s.digest, candidate)) found = s.principal;
    if (found) return found;
    if ((this.secret || this.publicKey) && token.split('.').length === 3) return this.verifyJwt(token);
    throw new AuthError('invalid', 'the token is not valid');
  }

  private async verifyJwt(token: string): Promise<Principal> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new AuthError('malformed', 'the token is malformed');
    }
    const hs = alg === 'HS256';
    const key = hs ? this.secret : this.publicKey?.key;
    const algorithms = hs ? ['HS256'] : (this.publicKey?.algorithms ?? []);
    if (!key || !alg || !algorithms.includes(alg)) throw new AuthError('invalid', "the token's algorithm is not one the configured keys accept");
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms, requiredClaims: ['exp'] }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AuthError('expired', 'the token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed) throw new AuthError('invalid', `the token's ${err.claim} claim is not valid`);
      throw new AuthError('invalid', 'the token is not valid');
    }
    const named = scopeNames(payload.scope ?? payload.scp);
    const sessions = payload.sessions;
    if (named === undefined) throw new AuthError('invalid', 'the token has no scope claim (scope: space-separated scopes, or scp)');
    if (!Array.isArray(sessions) || !sessions.every((s) => typeof s === 'string' && s.length > 0)) {
      throw new AuthError('invalid', 'the token has no sessions claim (an array of session ids or prefixes ending in *)');
    }
    if (named.length === 0) throw new AuthError('invalid', `the token's scope claim is empty ${SCOPE_LIST}`);
    return { id: tokenId(token), scopes: new Set(named.filter(isScope)), claimed: named, sessions: sessions as string[], expiresAt: (payload.exp as number) * 1000 };
  }
}

/** A scope claim's names: a space-separated string or an array of strings; undefined when it is neither. */
function scopeNames(claim: unknown): string[] | undefined {
  if (typeof claim === 'string') return claim.split(' ').filter((s) => s !== '');
  if (Array.isArray(claim) && claim.every((s) => typeof s === 'string')) return claim.filter((s) => s !== '');
  return undefined;
}

/** The token of `Authorization: Bearer …`; undefined when there is no such header. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +([^ ]+) *$/i.exec(header);
  if (!match) throw new AuthError('malformed', 'the Authorization header must be "Bearer <token>"');
  return match[1];
}
