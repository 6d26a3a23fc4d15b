/**
 * The built-in panel (src/panel, built into dist/panel): `GET /` is its page, its files are under
 * `/panel/`, and `/sessions/:session` redirects to the page's hash route. Public like the probes:
 * the page holds no data, and everything it shows comes from the API with the person's token.
 * A strict CSP (no inline script, nothing from another origin) backs up the panel's text-only DOM.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config/config.js';
import { HorologiumError } from '../common/errors.js';
import { SESSION_ID } from '../wire/schemas.js';

/** From src/routes (tsx) and dist/routes (built, installed) alike, the build's output is ../../dist/panel. */
const DEFAULT_DIR = fileURLToPath(new URL('../../dist/panel/', import.meta.url));

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export async function panelRoutes(app: FastifyInstance, config: Config): Promise<void> {
  const root = config.panelDir ?? DEFAULT_DIR;
  const built = existsSync(`${root}/index.html`);
  const notBuilt = () => new HorologiumError('NOT_FOUND', 'The panel is not built: run `npm run build` (npm start does).');
  const page = (reply: FastifyReply) => {
    if (!built) throw notBuilt();
    return reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache').sendFile('index.html', root);
  };

  if (built) {
    await app.register(fastifyStatic, {
      root,
      prefix: '/panel/',
      index: false,
      wildcard: true,
      cacheControl: true,
      maxAge: 0,
      setHeaders: (res) => {
        for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      },
    });
  }

  app.get('/', async (_request, reply) => page(reply));
  // Browsers ask for it whatever the page's <link rel="icon"> says.
  app.get('/favicon.ico', async (_request, reply) => {
    if (!built) throw notBuilt();
    return reply.headers(SECURITY_HEADERS).type('image/svg+xml').header('cache-control', 'max-age=86400').sendFile('favicon.svg', root);
  });
  // A link a person can paste: the page's own route for one session.
  app.get('/sessions/:session', async (request, reply) => {
    const { session } = request.params as { session: string };
    if (!SESSION_ID.test(session)) throw new HorologiumError('INVALID_SESSION_ID');
    return reply.redirect(`../#/sessions/${encodeURIComponent(session)}`, 302);
  });
}
