/**
 * Auth (docs/protocol.md section 7) against a real listening server: the matrix of every endpoint and
 * the stream × {no token, malformed, wrong key, expired, alg none, wrong scope, other session}, the
 * JWT algorithms, the stream's auth message, expiry and refresh, and isolation under load.
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import t, { type Test } from 'tap';
import type { StaticToken } from '../../src/auth/principal.js';
import { testConfig } from '../helpers/config.js';
import { startServer, type Running } from '../helpers/server.js';
import { connect, upgradeOutcome } from '../helpers/ws-client.js';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
const OTHER_SECRET = 'another-secret-that-is-long-enough-9876543210';

const TOKENS: StaticToken[] = [
  { token: 'publish-team-a-0123456789', scopes: ['publish'], sessions: ['team-a:*'] },
  { token: 'consume-team-a-0123456789', scopes: ['consume'], sessions: ['team-a:*'] },
  { token: 'subscribe-team-a-012345678', scopes: ['subscribe'], sessions: ['team-a:*'] },
  { token: 'admin-everything-0123456789', scopes: ['admin'], sessions: ['*'] },
  { token: 'admin-team-b-only-012345678', scopes: ['admin'], sessions: ['team-b:*'] },
];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ADMIN = bearer('admin-everything-0123456789');

async function jwt(claims: Record<string, unknown>, secret = SECRET, expiresIn: string | number = '1h') {
  const signer = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (expiresIn !== 'none') signer.setExpirationTime(expiresIn);
  return signer.sign(new TextEncoder().encode(secret));
}

/** An unsigned token (`alg: none`), as an attacker would write it. */
function algNone(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
}

async function server(t: Test, overrides = {}): Promise<Running> {
  const auth = { ...testConfig().auth, tokens: TOKENS, jwtSecret: SECRET, open: false };
  return startServer(t, { auth, rateLimit: 0, ...overrides });
}

interface Endpoint {
  name: string;
  scope: 'publish' | 'consume' | 'subscribe' | 'admin' | 'any';
  call(srv: Running, session: string, headers: Record<string, string>): Promise<{ status: number; json: any }>;
}

let callId = 0;
const ENDPOINTS: Endpoint[] = [
  { name: 'POST tool-calls', scope: 'publish', call: (s, id, h) => s.post(`/v1/sessions/${id}/tool-calls`, { call_id: `c${++callId}`, name: 'grep' }, h) },
  { name: 'POST tool-results', scope: 'publish', call: (s, id, h) => s.post(`/v1/sessions/${id}/tool-results`, { call_id: `r${++callId}`, name: 'grep', result: 'x' }, h) },
  { name: 'POST events', scope: 'publish', call: (s, id, h) => s.post(`/v1/sessions/${id}/events`, { type: 'note', data: { k: 1 } }, h) },
  { name: 'GET queue', scope: 'consume', call: (s, id, h) => s.get(`/v1/sessions/${id}/queue`, h) },
  {
    name: 'GET tool-results/{call_id}',
    scope: 'consume',
    async call(s, id, h) {
      // A result to read (posted by the admin, in team-a only: team-b must see nothing stored).
      if (id === 'team-a:s1') await s.post(`/v1/sessions/${id}/tool-results`, { call_id: 'stored', name: 'grep', result: 'x' }, ADMIN);
      return s.get(`/v1/sessions/${id}/tool-results/stored`, h);
    },
  },
  { name: 'POST queue/ack', scope: 'consume', call: (s, id, h) => s.post(`/v1/sessions/${id}/queue/ack`, { through: 0 }, h) },
  { name: 'GET events', scope: 'subscribe', call: (s, id, h) => s.get(`/v1/sessions/${id}/events`, h) },
  { name: 'GET metrics', scope: 'admin', call: (s, _id, h) => s.get('/metrics', h) },
  { name: 'GET openapi.json', scope: 'any', call: (s, _id, h) => s.get('/openapi.json', h) },
];
const TOKEN_OF_SCOPE = {
  publish: 'publish-team-a-0123456789',
  consume: 'consume-team-a-0123456789',
  subscribe: 'subscribe-team-a-012345678',
  admin: 'admin-everything-0123456789',
  any: 'subscribe-team-a-012345678',
} as const;
const WRONG_SCOPE = { publish: 'subscribe', consume: 'publish', subscribe: 'consume', admin: 'publish', any: undefined } as const;

t.test('the HTTP matrix: every endpoint × every kind of bad credential', async (t) => {
  const srv = await server(t);
  const scopeClaim = (scope: string) => (scope === 'any' ? 'subscribe' : scope);
  for (const ep of ENDPOINTS) {
    const right = TOKEN_OF_SCOPE[ep.scope];
    const unauthorized: Array<[string, Record<string, string>]> = [
      ['no token', {}],
      ['not a Bearer header', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ['Bearer with two words', { authorization: `Bearer ${right} extra` }],
      ['an unknown static token', bearer('not-a-token-of-this-server')],
      ['a JWT signed with another key', bearer(await jwt({ scope: scopeClaim(ep.scope), sessions: ['*'] }, OTHER_SECRET))],
      ['an expired JWT', bearer(await jwt({ scope: scopeClaim(ep.scope), sessions: ['*'] }, SECRET, Math.floor(Date.now() / 1000) - 10))],
      ['a JWT without exp', bearer(await jwt({ scope: scopeClaim(ep.scope), sessions: ['*'] }, SECRET, 'none'))],
      ['an alg none JWT', bearer(algNone({ scope: scopeClaim(ep.scope), sessions: ['*'] }))],
      ['a JWT with a tampered payload', bearer((await jwt({ scope: 'subscribe', sessions: ['x'] })).replace(/\.[^.]+\./, `.${Buffer.from(JSON.stringify({ scope: 'admin', sessions: ['*'], exp: 9999999999 })).toString('base64url')}.`))],
    ];
    for (const [label, headers] of unauthorized) {
      const r = await ep.call(srv, 'team-a:s1', headers);
      t.equal(r.status, 401, `${ep.name}, ${label}: 401`);
      t.equal(r.json?.error?.code, 'UNAUTHORIZED', `${ep.name}, ${label}: the envelope`);
    }
    const wrong = WRONG_SCOPE[ep.scope];
    if (wrong) {
      const r = await ep.call(srv, 'team-a:s1', bearer(TOKEN_OF_SCOPE[wrong]));
      t.equal(r.status, 403, `${ep.name}, a token without ${ep.scope}: 403`);
      t.equal(r.json?.error?.code, 'FORBIDDEN');
      const jwtWrong = await ep.call(srv, 'team-a:s1', bearer(await jwt({ scope: wrong, sessions: ['*'] })));
      t.equal(jwtWrong.status, 403, `${ep.name}, a JWT without ${ep.scope}: 403`);
    }
    if (ep.scope !== 'admin' && ep.scope !== 'any') {
      const other = await ep.call(srv, 'team-b:s1', bearer(right));
      t.equal(other.status, 403, `${ep.name}, another team's session: 403`);
      const prefixTrick = await ep.call(srv, 'team-ab:s1', bearer(right));
      t.equal(prefixTrick.status, 403, `${ep.name}, team-ab is not under team-a:*`);
    }
    const ok = await ep.call(srv, 'team-a:s1', bearer(right));
    t.ok(ok.status >= 200 && ok.status < 300, `${ep.name}, the right token: ${ok.status}`);
    const viaJwt = await ep.call(srv, 'team-a:s1', bearer(await jwt({ scope: scopeClaim(ep.scope), sessions: ['team-a:*'] })));
    t.ok(viaJwt.status >= 200 && viaJwt.status < 300, `${ep.name}, a JWT with the scope: ${viaJwt.status}`);
  }
  // Nothing any refused request sent was stored: team-b saw only refusals.
  const events = await srv.get('/v1/sessions/team-b:s1/events', ADMIN);
  t.same([events.json.head, events.json.events.length], [0, 0], 'no event in the session only refused requests targeted');
  const queue = await srv.get('/v1/sessions/team-b:s1/queue', ADMIN);
  t.same([queue.json.head, queue.json.entries.length], [0, 0], 'no queue entry either');
  t.equal((await srv.get('/healthz')).status, 200, '/healthz needs no token');
  t.equal((await srv.get('/readyz')).status, 200, '/readyz needs no token');
  t.equal((await srv.get('/v1/sessions/team-b:s1/events', bearer('admin-team-b-only-012345678'))).status, 200, 'admin is limited to its sessions');
  t.equal((await srv.get('/v1/sessions/team-a:s1/events', bearer('admin-team-b-only-012345678'))).status, 403);
});

t.test('a JWT may carry scopes the server does not know: they are ignored, and a 403 says what the token names', async (t) => {
  const srv = await server(t);
  // An identity provider's token: scopes for many services beside ours.
  const idp = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ scope: 'openid profile email subscribe offline_access', sessions: ['*'] })));
  t.equal(idp.status, 200, 'subscribe among openid, profile, email: allowed');
  const scp = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ scp: ['read:user', 'subscribe'], sessions: ['*'] })));
  t.equal(scp.status, 200, 'scopes in scp as an array (Okta, Entra)');
  const scpText = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ scp: 'subscribe other', sessions: ['*'] })));
  t.equal(scpText.status, 200, 'scopes in scp as a space-separated string');
  const ok = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ scope: 'subscribe  consume', sessions: ['*'] })));
  t.equal(ok.status, 200, 'known scopes, extra spaces and all');

  for (const [scope, message] of [
    ['publish other', 'This token lacks the subscribe scope (it names "publish", "other").'],
    ['openid profile', 'This token lacks the subscribe scope (it names "openid", "profile").'],
    ['publisher', 'This token lacks the subscribe scope (it names "publisher"; did you mean "publish" for "publisher"?).'],
    ['openid subscribe_', 'This token lacks the subscribe scope (it names "openid", "subscribe_"; did you mean "subscribe" for "subscribe_"?).'],
    ['Subscribe', 'This token lacks the subscribe scope (it names "Subscribe"; did you mean "subscribe" for "Subscribe"?).'],
    ['subscirbe', 'This token lacks the subscribe scope (it names "subscirbe"; did you mean "subscribe" for "subscirbe"?).'],
  ] as const) {
    const r = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ scope, sessions: ['*'] })));
    t.equal(r.status, 403, `scope ${JSON.stringify(scope)}: 403`);
    t.same(r.json.error, { code: 'FORBIDDEN', message, details: r.json.error.details }, `scope ${JSON.stringify(scope)}: ${message}`);
  }
  const empty = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ scope: '', sessions: ['*'] })));
  t.equal(empty.status, 401, 'an empty scope claim is still a 401');
  t.match(empty.json.error.message, /scope claim is empty/);
  const none = await srv.get('/v1/sessions/team-a:s/events', bearer(await jwt({ sessions: ['*'] })));
  t.equal(none.status, 401, 'no scope claim at all: 401');
  t.match(none.json.error.message, /no scope claim/);
});

t.test('401 replies name the scheme and never echo the token', async (t) => {
  const srv = await server(t);
  const r = await srv.get('/v1/sessions/team-a:s/events', bearer('SECRET-NOT-A-TOKEN-xyz'));
  t.equal(r.status, 401);
  t.equal(r.headers.get('www-authenticate'), 'Bearer');
  t.notOk(r.text.includes('SECRET-NOT-A-TOKEN'), 'the reply does not hold the token');
  t.same(Object.keys(r.json.error).sort(), ['code', 'details', 'message']);
});

t.test('JWTs signed with RS256, ES256 and EdDSA public keys; other algorithms refused', async (t) => {
  const kinds = [
    { alg: 'RS256', pair: generateKeyPairSync('rsa', { modulusLength: 2048 }) },
    { alg: 'ES256', pair: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) },
    { alg: 'EdDSA', pair: generateKeyPairSync('ed25519') },
  ];
  for (const { alg, pair } of kinds) {
    const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const srv = await startServer(t, { auth: { tokens: [], jwtPublicKey: pem, open: false }, rateLimit: 0 });
    const token = await new SignJWT({ scope: 'subscribe', sessions: ['p:*'] }).setProtectedHeader({ alg }).setExpirationTime('10m').sign(pair.privateKey);
    t.equal((await srv.get('/v1/sessions/p:1/events', bearer(token))).status, 200, `${alg} verifies`);
    const other = kinds.find((k) => k.alg !== alg)!;
    const forged = await new SignJWT({ scope: 'subscribe', sessions: ['p:*'] }).setProtectedHeader({ alg: other.alg }).setExpirationTime('10m').sign(other.pair.privateKey);
    t.equal((await srv.get('/v1/sessions/p:1/events', bearer(forged))).status, 401, `${other.alg} is refused where the key is ${alg}`);
    // The classic confusion: HS256 "signed" with the public key's text as the secret.
    const confused = await jwt({ scope: 'subscribe', sessions: ['p:*'] }, pem);
    t.equal((await srv.get('/v1/sessions/p:1/events', bearer(confused))).status, 401, 'HS256 with the public key as secret is refused');
  }
});

t.test('the stream: token at the upgrade by header or ?token=, refused before the handshake', async (t) => {
  const srv = await server(t);
  t.equal(await upgradeOutcome(srv, '', bearer('not-a-token-of-this-server')), 401, 'a bad header token: 401');
  t.equal(await upgradeOutcome(srv, '?token=not-a-token-of-this-server'), 401, 'a bad query token: 401');
  t.equal(await upgradeOutcome(srv, '?token=' + (await jwt({ scope: 'subscribe', sessions: ['*'] }, SECRET, Math.floor(Date.now() / 1000) - 5))), 401, 'expired: 401');
  t.equal(await upgradeOutcome(srv, '', bearer('publish-team-a-0123456789')), 403, 'no subscribe scope: 403');
  t.equal(await upgradeOutcome(srv, '', { authorization: 'Basic abc' }), 401, 'malformed header: 401');
  t.equal(await upgradeOutcome(srv, '?token=subscribe-team-a-012345678'), 'open');
  t.equal(await upgradeOutcome(srv, ''), 'open', 'no token: the socket opens and waits for auth');
});

t.test('the stream: a subscribe outside the token gets an error frame and never a status frame', async (t) => {
  const srv = await server(t);
  const c = await connect(srv, '?token=subscribe-team-a-012345678');
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'team-b:secret', since: 0 } }));
  t.match(await c.next(), { method: 'error', result: { code: 'FORBIDDEN' } });
  c.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'team-a:mine' } }));
  t.match(await c.next(), { method: 'subscribed', result: { session: 'team-a:mine' } });
  await srv.post('/v1/sessions/team-b:secret/events', { type: 'note', data: { secret: true } }, ADMIN);
  await srv.post('/v1/sessions/team-a:mine/events', { type: 'note', data: { mine: true } }, ADMIN);
  t.match(await c.next((f) => f.method === 'status'), { result: { session: 'team-a:mine', data: { mine: true } } });
  t.notOk(c.frames.some((f) => f.result?.session === 'team-b:secret' && f.method === 'status'), 'nothing of team-b');
  const atConnect = await connect(srv, '?token=subscribe-team-a-012345678&session=team-b:secret&since=0');
  t.teardown(() => atConnect.ws.close());
  t.match(await atConnect.next(), { method: 'error', result: { code: 'FORBIDDEN' } }, '?session= is checked the same way');
});

t.test('the stream: auth as the first message, or 4001', async (t) => {
  const srv = await server(t);
  const c = await connect(srv, '?session=team-a:first&since=0');
  t.teardown(() => c.ws.close());
  c.ws.send(JSON.stringify({ method: 'auth', params: { token: 'subscribe-team-a-012345678' } }));
  t.match(await c.next(), { method: 'subscribed', result: { session: 'team-a:first' } }, 'the ?session= subscription runs after auth');

  const wrongFirst = await connect(srv);
  wrongFirst.ws.send(JSON.stringify({ method: 'subscribe', params: { session: 'team-a:first' } }));
  t.equal((await wrongFirst.closed).code, 4001, 'anything else first: 4001');
  t.equal(wrongFirst.frames.length, 0, 'and no frame before it');

  const badToken = await connect(srv);
  badToken.ws.send(JSON.stringify({ method: 'auth', params: { token: 'not-a-token-of-this-server' } }));
  t.equal((await badToken.closed).code, 4001, 'a bad token in auth: 4001');

  const noScope = await connect(srv);
  noScope.ws.send(JSON.stringify({ method: 'auth', params: { token: 'publish-team-a-0123456789' } }));
  t.equal((await noScope.closed).code, 4003, 'a token without subscribe: 4003');

  const silent = await connect(srv);
  const started = Date.now();
  t.equal((await silent.closed).code, 4001, 'no auth message at all: 4001');
  t.ok(Date.now() - started >= 4500, 'after the 5 s the contract gives');
});

t.test('the stream: an expiring token closes with 4001 unless refreshed in time', async (t) => {
  const srv = await server(t);
  const soon = () => jwt({ scope: 'subscribe', sessions: ['team-a:*'] }, SECRET, Math.floor(Date.now() / 1000) + 2);
  const lapsing = await connect(srv, `?token=${await soon()}&session=team-a:exp`);
  await lapsing.next((f) => f.method === 'subscribed');
  t.equal((await lapsing.closed).code, 4001, 'closed when the token expires');

  const refreshed = await connect(srv, `?token=${await soon()}&session=team-a:exp`);
  t.teardown(() => refreshed.ws.close());
  await refreshed.next((f) => f.method === 'subscribed');
  const later = Math.floor(Date.now() / 1000) + 60;
  refreshed.ws.send(JSON.stringify({ method: 'refresh', params: { token: await jwt({ scope: 'subscribe', sessions: ['team-a:*'] }, SECRET, later) } }));
  t.same(await refreshed.next((f) => f.method === 'refreshed'), { method: 'refreshed', result: { exp: later } });
  refreshed.ws.send(JSON.stringify({ method: 'refresh', params: { token: 'not-a-token-of-this-server' } }));
  t.match(await refreshed.next((f) => f.method === 'error'), { result: { code: 'UNAUTHORIZED' } }, 'a bad refresh is an error frame');
  await new Promise((r) => setTimeout(r, 3000));
  t.equal(refreshed.ws.readyState, refreshed.ws.OPEN, 'still open past the first token’s exp');
  await srv.post('/v1/sessions/team-a:exp/events', { type: 'note', data: { after: 'refresh' } }, ADMIN);
  t.match(await refreshed.next((f) => f.method === 'status'), { result: { data: { after: 'refresh' } } });

  refreshed.ws.send(JSON.stringify({ method: 'refresh', params: { token: await jwt({ scope: 'subscribe', sessions: ['team-a:other'] }, SECRET, later) } }));
  t.match(await refreshed.next((f) => f.method === 'error'), { result: { code: 'FORBIDDEN' } }, 'a narrower token ends what it no longer covers');
  t.match(await refreshed.next((f) => f.method === 'unsubscribed'), { result: { session: 'team-a:exp' } });
});

t.test('browser origins: HOROLOGIUM_ALLOWED_ORIGINS refuses others with 403 before the handshake', async (t) => {
  const srv = await server(t, { allowedOrigins: ['https://panel.example'] });
  const token = '?token=subscribe-team-a-012345678';
  t.equal(await upgradeOutcome(srv, token, { origin: 'https://evil.example' }), 403);
  t.equal(await upgradeOutcome(srv, token, { origin: 'https://panel.example' }), 'open');
  t.equal(await upgradeOutcome(srv, token, { origin: 'HTTPS://PANEL.EXAMPLE' }), 'open', 'origins compare case-insensitively');
  t.equal(await upgradeOutcome(srv, token), 'open', 'no Origin: not a browser');
});

t.test('limits: connections per address and requests per token', async (t) => {
  const srv = await server(t, { maxConnectionsPerAddress: 2, rateLimit: 5 });
  const a = await connect(srv, '?token=subscribe-team-a-012345678');
  const b = await connect(srv, '?token=subscribe-team-a-012345678');
  t.equal(await upgradeOutcome(srv, '?token=subscribe-team-a-012345678'), 429, 'the third connection from one address: 429');
  a.ws.close();
  await a.closed;
  await new Promise((r) => setTimeout(r, 50));
  t.equal(await upgradeOutcome(srv, '?token=subscribe-team-a-012345678'), 'open', 'a closed one frees its place');
  b.ws.close();

  const replies = [];
  // A token of its own: the upgrades above spent the subscribe token's budget (they are requests too).
  for (let k = 0; k < 7; k++) replies.push(await srv.get('/v1/sessions/team-b:rl/events', bearer('admin-team-b-only-012345678')));
  t.same(replies.map((r) => r.status), [200, 200, 200, 200, 200, 429, 429]);
  const limited = replies[5]!;
  t.equal(limited.json.error.code, 'RATE_LIMITED');
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'with Retry-After');
  t.equal((await srv.get('/v1/sessions/team-b:rl/events', ADMIN)).status, 200, 'another token has its own budget');
});

t.test('event data size is limited with its own error', async (t) => {
  const srv = await server(t, { maxEventBytes: 1000 });
  const r = await srv.post('/v1/sessions/team-a:big/events', { type: 'note', data: { text: 'x'.repeat(1000) } }, ADMIN);
  t.equal(r.status, 413);
  t.equal(r.json.error.code, 'EVENT_TOO_LARGE');
  t.equal((await srv.get('/v1/sessions/team-a:big/events', ADMIN)).json.head, 0, 'nothing stored');
  t.equal((await srv.post('/v1/sessions/team-a:big/events', { type: 'note', data: { text: 'x'.repeat(900) } }, ADMIN)).status, 202);
});

t.test('isolation under concurrent load: subscribers never see another session', async (t) => {
  const srv = await server(t, { historySize: 10_000 });
  const teams = ['team-a', 'team-b'] as const;
  const subscribers = await Promise.all(
    teams.flatMap((team) => [0, 1].map(async () => {
      const token = await jwt({ scope: 'subscribe', sessions: [`${team}:*`] });
      const c = await connect(srv, `?token=${token}&session=${team}:load`);
      await c.next((f) => f.method === 'subscribed');
      return { team, c };
    })),
  );
  t.teardown(() => subscribers.forEach((s) => s.c.ws.close()));
  const producers = teams.map(async (team) => {
    const token = bearer(await jwt({ scope: 'publish', sessions: [`${team}:*`] }));
    const posts = [];
    for (let k = 1; k <= 150; k++) posts.push(srv.post(`/v1/sessions/${team}:load/events`, { type: 'note', data: { team, k } }, token));
    return Promise.all(posts);
  });
  await Promise.all(producers);
  for (const { team, c } of subscribers) {
    await c.next((f) => f.method === 'status' && f.result.seq === 150, 10_000);
    const status = c.frames.filter((f) => f.method === 'status');
    t.equal(status.length, 150, `${team}: all 150`);
    t.ok(status.every((f) => f.result.session === `${team}:load` && f.result.data.team === team), `${team}: only its own session`);
  }
});

t.test('behind a trusted proxy, the connection limit counts the forwarded client address', async (t) => {
  const srv = await server(t, { maxConnectionsPerAddress: 1, trustProxy: ['127.0.0.1'] });
  const token = '?token=subscribe-team-a-012345678';
  const one = await connect(srv, token, { 'x-forwarded-for': '10.0.0.1' });
  t.teardown(() => one.ws.close());
  t.equal(await upgradeOutcome(srv, token, { 'x-forwarded-for': '10.0.0.1' }), 429, 'the same client again: 429');
  t.equal(await upgradeOutcome(srv, token, { 'x-forwarded-for': '10.0.0.2' }), 'open', 'another client behind the same proxy: admitted');
});
