/**
 * Running the service as a process: read the configuration from an environment, build the app,
 * listen, and on SIGTERM or SIGINT stop accepting, finish in-flight requests, close the store and
 * exit (close-with-grace). `npm start` (src/server.ts) and `horologium serve` both come here.
 */
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, unknownSettings } from './config/config.js';

/** Starts the server from `env`; a configuration it cannot start with ends the process with exit 2. */
export async function runServer(env: NodeJS.ProcessEnv): Promise<FastifyInstance> {
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`horologium: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let app: FastifyInstance;
  try {
    app = await buildApp(config);
  } catch (err) {
    process.stderr.write(`horologium: cannot start: ${(err as Error).message}\n`);
    process.exit(2);
  }
  closeWithGrace({ delay: 15_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'stopping after an error');
    else app.log.info({ signal }, 'stopping');
    await app.close();
  });
  for (const { variable, suggestion } of unknownSettings(env)) {
    app.log.warn({ variable, ...(suggestion ? { suggestion } : {}) }, `unknown setting ${variable} is ignored${suggestion ? `; did you mean ${suggestion}?` : ''}`);
  }
  const address = await app.listen({ port: config.port, host: config.host });
  app.log.info({ address, store: app.horologium.store.kind, auth: app.horologium.authenticator.enabled ? 'on' : 'off' }, 'horologium ready');
  return app;
}
