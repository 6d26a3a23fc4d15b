/**
 * `horologium`: the server as a library. Importing it starts nothing, opens no port and creates no
 * file; `buildApp(loadConfig(env))` builds a Fastify instance to `listen` on, and `runServer(env)`
 * does what `npm start` does.
 */
export { buildApp, type BuildOptions } from './app.js';
export { loadConfig, ConfigError, type Config } from './config/config.js';
export { runServer } from './run-server.js';
export { ERRORS, CLOSE_CODES, type ErrorCode } from './common/errors.js';
