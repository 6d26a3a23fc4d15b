/**
 * Browser origins (auth/origin-policy.ts): which pages may use the stream, the SSE streams and the
 * HTTP API, over HTTP with exact replies, and in real Chromium from a page of a foreign origin
 * (refused) and of an allowed one (open, with the CORS headers a cross-origin page needs).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import t, { type Test } from 'tap';
import { launchChromium } from '../helpers/browser.js';
import { startServer } from '../helpers/server.js';
import { upgradeOutcome } from '../helpers/ws-client.js';

const TOKEN = 'subscribe-token-0123456789abcd';
const withAuth = { auth: { tokens: [{ token: TOKEN, scopes: ['admin' as const], sessions: ['*'] }], open: false } };

t.test('default mode (no auth): loopback origins only, for the API, the stream and SSE', async (t) => {
  const srv = await startServer(t);
  for (const origin of ['http://localhost:5173', 'http://127.0.0.1:9', 'http://[::1]:8080', 'https://localhost']) {
    const r = await srv.get('/v1/sessions/o/events', { origin });
    t.same([r.status, r.headers.get('access-control-allow-origin')], [200, origin], `${origin}: allowed, with CORS`);
    t.equal(await upgradeOutcome(srv, '', { origin }), 'open');
  }
  for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'null', `http://rebound.example:${new URL(srv.url).port}`]) {
    const r = await srv.get('/v1/sessions/o/events', { origin, host: origin === 'null' ? '127.0.0.1' : new URL(origin).host });
    t.same([r.status, r.json.error.code, r.headers.get('access-control-allow-origin')], [403, 'FORBIDDEN', null], `${origin}: refused`);
    t.match(r.json.error.message, /loopback origins only/);
    t.equal(await upgradeOutcome(srv, '', { origin }), 403, `${origin}: the upgrade is refused too`);
    t.equal((await srv.get('/v1/sessions/o/sse', { origin })).status, 403, `${origin}: and SSE`);
  }
  const write = await fetch(`${srv.url}/v1/sessions/o/events`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{"type":"a","data":{}}' });
  t.equal(write.status, 403, 'a foreign page cannot write either');
  t.same((await srv.get('/v1/sessions/o/events')).json.events, [], 'and nothing was stored');
  t.equal((await srv.get('/v1/sessions/o/events')).status, 200, 'no Origin (not a browser): as before');

  const preflight = await fetch(`${srv.url}/v1/sessions/o/events`, {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
  });
  t.equal(preflight.status, 204);
  t.equal(preflight.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  t.match(preflight.headers.get('access-control-allow-methods'), /POST/);
  t.match(preflight.headers.get('access-control-allow-headers'), /authorization/);
  const plainOptions = await fetch(`${srv.url}/v1/sessions/o/events`, { method: 'OPTIONS' });
  t.same([plainOptions.status, ((await plainOptions.json()) as any).error.code, plainOptions.headers.get('allow')], [405, 'METHOD_NOT_ALLOWED', 'GET, HEAD, POST'], 'an OPTIONS that is no preflight is a 405');
});

t.test('HOROLOGIUM_ALLOWED_ORIGINS: exactly those, and the panel\'s own origin', async (t) => {
  const srv = await startServer(t, { allowedOrigins: ['https://panel.example'] });
  t.equal((await srv.get('/v1/sessions/o/events', { origin: 'https://panel.example' })).status, 200);
  t.equal((await srv.get('/v1/sessions/o/events', { origin: 'HTTPS://PANEL.EXAMPLE/' })).status, 200, 'compared case-insensitively');
  const refused = await srv.get('/v1/sessions/o/events', { origin: 'http://localhost:5173' });
  t.same([refused.status, refused.json.error.code], [403, 'FORBIDDEN'], 'a list replaces the loopback default');
  t.match(refused.json.error.message, /HOROLOGIUM_ALLOWED_ORIGINS/);
  const own = srv.url;
  t.equal((await srv.get('/v1/sessions/o/events', { origin: own })).status, 200, 'the page this server served');
  t.equal(await upgradeOutcome(srv, '', { origin: own }), 'open');
});

t.test('auth on and no list: any origin (a page needs a token, which is never ambient)', async (t) => {
  const srv = await startServer(t, withAuth);
  const r = await srv.get('/v1/sessions/o/events', { origin: 'https://anywhere.example', authorization: `Bearer ${TOKEN}` });
  t.same([r.status, r.headers.get('access-control-allow-origin')], [200, 'https://anywhere.example']);
  t.equal((await srv.get('/v1/sessions/o/events', { origin: 'https://anywhere.example' })).status, 401, 'and without a token, 401');
});

/** A page server for a foreign origin: Chromium maps foreign.test to loopback (--host-resolver-rules). */
async function pageServer(t: Test): Promise<number> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>page</title>'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return (server.address() as { port: number }).port;
}

/** From a page of `pageUrl`, what the stream, SSE and the API let it do on `base`. */
async function probe(browser: NonNullable<Awaited<ReturnType<typeof launchChromium>>>, pageUrl: string, base: string) {
  const page = await browser.newPage();
  try {
    await page.goto(pageUrl);
    return await page.evaluate(async (base) => {
      const ws = await new Promise<string>((resolve) => {
        const s = new WebSocket(`${base.replace('http', 'ws')}/v1/stream?session=cors`);
        s.onmessage = (m) => {
          if (String(m.data).includes('"subscribed"')) resolve('subscribed');
          s.close();
        };
        s.onclose = () => resolve('refused');
      });
      const sse = await new Promise<string>((resolve) => {
        const source = new EventSource(`${base}/v1/sessions/cors/sse`);
        source.addEventListener('subscribed', () => {
          source.close();
          resolve('subscribed');
        });
        source.onerror = () => {
          source.close();
          resolve('refused');
        };
      });
      const api = await fetch(`${base}/v1/sessions/cors/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"a","data":{}}' }).then(
        (r) => r.status,
        () => 'blocked',
      );
      return { ws, sse, api };
    }, base);
  } finally {
    await page.close();
  }
}

t.test('in Chromium: a foreign page is refused, a loopback page and a listed one are served', async (t) => {
  const browser = await launchChromium(t, ['--host-resolver-rules=MAP foreign.test 127.0.0.1']);
  if (!browser) return;
  const port = await pageServer(t);
  const foreign = `http://foreign.test:${port}/`;
  const srv = await startServer(t);
  t.same(await probe(browser, foreign, srv.url), { ws: 'refused', sse: 'refused', api: 'blocked' }, 'default mode: a foreign page gets nothing');
  t.same((await srv.get('/v1/sessions/cors/events')).json.events, [], 'and stored nothing');
  t.same(await probe(browser, `http://localhost:${port}/`, srv.url), { ws: 'subscribed', sse: 'subscribed', api: 202 }, 'a loopback page (another port: cross-origin) is served');

  const listed = await startServer(t, { allowedOrigins: [`http://foreign.test:${port}`] });
  t.same(await probe(browser, foreign, listed.url), { ws: 'subscribed', sse: 'subscribed', api: 202 }, 'a listed origin is served');
});
