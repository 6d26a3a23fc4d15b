/** The panel as HTTP serves it: the page, its files, the deep-link redirect and the headers. */
import t from 'tap';
import { builtPanel } from '../helpers/browser.js';
import { startServer, tempDir } from '../helpers/server.js';

t.test('GET / is the page, with a CSP that allows only this origin; its files are under /panel/', async (t) => {
  const srv = await startServer(t, { panelDir: await builtPanel() });
  const page = await fetch(`${srv.url}/`);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.equal(
    page.headers.get('content-security-policy'),
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  const html = await page.text();
  t.match(html, '<script type="module" src="panel/app.js"></script>');
  t.notMatch(html, /https?:\/\//, 'nothing from another origin');
  const app = await fetch(`${srv.url}/panel/app.js`);
  t.equal(app.status, 200);
  t.match(app.headers.get('content-type'), /javascript/);
  t.notMatch(await app.text(), /innerHTML|https?:\/\/(?!www\.w3\.org)/, 'no innerHTML, no remote URL in the bundle');
  t.equal((await fetch(`${srv.url}/panel/panel.css`)).status, 200);
  const missing = await fetch(`${srv.url}/panel/nope.js`);
  t.equal(missing.status, 404);
});

t.test('/sessions/:id redirects to the hash route; a bad id is the envelope', async (t) => {
  const srv = await startServer(t, { panelDir: await builtPanel() });
  const res = await fetch(`${srv.url}/sessions/team-a:run.1`, { redirect: 'manual' });
  t.equal(res.status, 302);
  t.equal(res.headers.get('location'), '../#/sessions/team-a%3Arun.1');
  const bad = await srv.get('/sessions/%20bad');
  t.equal(bad.status, 400);
  t.equal(bad.json.error.code, 'INVALID_SESSION_ID');
});

t.test('a server without a panel build says how to build it', async (t) => {
  const srv = await startServer(t, { panelDir: tempDir(t) });
  const res = await srv.get('/');
  t.equal(res.status, 404);
  t.equal(res.json.error.code, 'NOT_FOUND');
  t.match(res.json.error.message, 'npm run build');
});
