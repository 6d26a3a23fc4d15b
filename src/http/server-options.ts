/**
 * Fastify's own options for the service: the logger (one request line of our own, never headers or
 * URLs), request ids, limits and timeouts, and the envelope for what Node's parser and Fastify's
 * router refuse before a route runs.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { LogController, type FastifyReply, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { Config } from '../config/config.js';
import { errorBody } from '../common/errors.js';
import { clientErrorHandler } from './client-errors.js';

/** An `X-Request-Id` a caller (or a proxy) may give: kept when it looks like an id, else replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;

/**
 * LOG_FORMAT=pretty: pino-pretty in pino's transport thread. It is a dev dependency, resolved only
 * when asked for, so production start-up never loads it; where it is missing, start-up says so.
 */
function prettyTransport(): { target: string; options: Record<string, unknown> } {
  let target: string;
  try {
    target = createRequire(import.meta.url).resolve('pino-pretty');
  } catch {
    throw new Error('LOG_FORMAT=pretty needs pino-pretty, which is not installed (npm install pino-pretty), or pipe the JSON lines through `npx pino-pretty`');
  }
  return { target, options: { colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } };
}

/** Lines gather up to this many bytes before a write, and wait at most FLUSH_EVERY_MS for one. */
const LOG_BUFFER_BYTES = 8_192;
const FLUSH_EVERY_MS = 100;

/**
 * stdout, written asynchronously and in batches: lines gather in sonic-boom's buffer until it
 * holds LOG_BUFFER_BYTES (one write per ~30 request lines under load instead of one per few) or
 * FLUSH_EVERY_MS has passed since a line came, so a quiet server's line still appears within a
 * tenth of a second; an idle server sets no timer at all. A warning or an error is written at
 * once, with what gathered before it. pino flushes the buffer at exit.
 */
function logDestination(): pino.DestinationStream {
  // Buffer mode: in its text mode sonic-boom measures the UTF-8 length of everything gathered so
  // far at every line (up to 8 KiB each time: ~2–3 µs a line); in buffer mode it adds up lengths.
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, contentMode: 'buffer' });
  let flushing: NodeJS.Timeout | undefined;
  const flush = () => {
    flushing = undefined;
    // flush() throws while sonic-boom is still opening the descriptor or once it is closed.
    try {
      destination.flush();
    } catch {
      /* the next line schedules another */
    }
  };
  const write = destination.write.bind(destination) as unknown as (chunk: Buffer) => boolean;
  destination.write = (line: string) => {
    const written = write(Buffer.from(line));
    // A warning or worse (pino writes the level first: 40, 50, 60) goes out at once.
    if (line.startsWith('{"level":') && line.charCodeAt(9) >= 0x34) {
      clearTimeout(flushing);
      flush();
    } else if (flushing === undefined) {
      flushing = setTimeout(flush, FLUSH_EVERY_MS);
      flushing.unref();
    }
    return written;
  };
  return destination;
}

export function serverOptions(config: Config): FastifyServerOptions {
  return {
    logger: {
      level: config.logLevel,
      // Asynchronous: the lines of one moment leave in one write, not one blocking write per line
      // on the request's path (12–18 µs of the main thread per request under load, BENCHMARKS.md); pino flushes them at exit
      // (docs/operations.md says what a kill -9 can lose).
      ...(config.logFormat === 'pretty' ? { transport: prettyTransport() } : { stream: logDestination() }),
      // The request line (request-log.ts) is the only per-request log; headers and URLs (which may
      // carry a token) are never logged.
      serializers: { req: () => ({}), res: () => ({}) },
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // Long ids are validated by the routes, with the section 4 envelope.
    routerOptions: { maxParamLength: 1024 },
    forceCloseConnections: 'idle',
    // Requests that arrive while the server closes get the envelope (SHUTTING_DOWN, shutdown.ts),
    // not Fastify's own 503 body.
    return503OnClosing: false,
    // Unique across instances and restarts (a per-process counter repeats); a caller's own id is
    // kept so one id follows a request through a proxy and into these logs.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy.join(',') : false,
    // A request (headers and body) must arrive within a minute: slow partial requests cannot
    // hold a connection for ever.
    requestTimeout: 60_000,
    clientErrorHandler,
    // A URL Fastify's router cannot decode (bad percent-encoding) gets the envelope too.
    frameworkErrors: (_error, _request, reply) => {
      void (reply as FastifyReply)
        .code(400)
        .type('application/json; charset=utf-8')
        .send(errorBody('BAD_REQUEST', 'The URL is not valid (check its percent-encoding).'));
    },
  };
}
