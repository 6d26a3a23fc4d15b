import { hash } from 'node:crypto';
import t from 'tap';
import { fingerprint } from '../../src/json/fingerprint.js';

/** The digest as first defined: the parts joined, then hashed once (fingerprints stored so stay valid). */
function joinedDigest(...parts: Array<string | null>): string {
  let joined = '';
  for (const part of parts) joined += part === null ? '\u0000absent' : `\u0001${part.length}:${part}`;
  return hash('sha256', joined, 'base64url');
}

t.test('small and large parts give the digest of the joined parts', async (t) => {
  for (const size of [0, 10, 16 * 1024 - 20, 16 * 1024, 16 * 1024 + 1, 100_000, 3_000_000]) {
    const result = `{"s":"${'é😀x\\n'.repeat(Math.ceil(size / 6)).slice(0, size)}"}`;
    t.equal(fingerprint('grep', null, result), joinedDigest('grep', null, result), `${size} characters, args absent`);
    t.equal(fingerprint('grep', '{"q":1}', result), joinedDigest('grep', '{"q":1}', result), `${size} characters, with args`);
  }
});

t.test('a known digest does not change', async (t) => {
  t.equal(fingerprint('grep', null, '{"content":"x"}'), joinedDigest('grep', null, '{"content":"x"}'));
  t.equal(fingerprint('grep', null, '{"content":"x"}'), hash('sha256', '\u00014:grep\u0000absent\u000115:{"content":"x"}', 'base64url'));
});

t.test('absent differs from every text, and lengths keep parts apart', async (t) => {
  t.not(fingerprint('a', null), fingerprint('a', 'null'));
  t.not(fingerprint('ab', 'c'), fingerprint('a', 'bc'));
  const big = 'x'.repeat(20_000);
  t.not(fingerprint('a', null, big), fingerprint('a', '', big));
});
