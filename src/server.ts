/**
 * The process: read the configuration, build the app, listen, and on SIGTERM or SIGINT stop
 * accepting, finish in-flight requests, close the store and exit (close-with-grace).
 */
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`horologium: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let app;
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
  await app.listen({ port: config.port, host: config.host });
  app.log.info({ store: app.horologium.store.kind }, 'horologium ready');
}

await main();
