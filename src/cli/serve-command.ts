/**
 * `horologium serve`: what `npm start` does. Each flag sets the environment variable of the same
 * setting (docs/configuration.md), so the two ways of configuring cannot disagree.
 */
import type { Command } from 'commander';

interface ServeFlags {
  port?: string;
  host?: string;
  store?: string;
  logLevel?: string;
}

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('run the server (settings from the environment; flags override them)')
    .option('--port <port>', 'port to listen on (PORT, default 8080)')
    .option('--host <host>', 'address to listen on (HOST, default 127.0.0.1)')
    .option('--store <url>', 'sqlite:<path>, memory: or redis://… (HOROLOGIUM_STORE, default sqlite:./data/horologium.db)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (LOG_LEVEL)')
    .action(async (flags: ServeFlags) => {
      const env = { ...process.env };
      if (flags.port !== undefined) env.PORT = flags.port;
      if (flags.host !== undefined) env.HOST = flags.host;
      if (flags.store !== undefined) env.HOROLOGIUM_STORE = flags.store;
      if (flags.logLevel !== undefined) env.LOG_LEVEL = flags.logLevel;
      // Loaded here, not at the top: the client commands (and --help) then start without the server's
      // modules (fastify, the stores), in a fraction of the time.
      const { runServer } = await import('../run-server.js');
      await runServer(env);
    });
}
