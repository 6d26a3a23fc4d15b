/**
 * `horologium tail <session>`: the session's status events as they happen, through the project's
 * own stream client (so it resumes after a disconnect from the last seq and epoch). One line per
 * event for a person, coloured on a TTY; `--json` prints each status frame's JSON text as it came.
 */
import { connect } from 'node:net';
import type { Command } from 'commander';
import { parseDuration } from '../common/duration.js';
import { palette } from './colours.js';
import { streamUrl, withConnection, type ConnectionFlags } from './connection.js';

interface TailFlags extends ConnectionFlags {
  json?: boolean;
  since?: string;
  /** Absent: give up at the first failure until a connection has been made, then retry for 30 s. */
  retry?: string;
}

/** How long a tail that has been connected keeps reconnecting when --retry is not given. */
const RECONNECT_BUDGET = '30s';
/** How long the first connection may take before a tail without --retry gives up. */
const FIRST_CONNECT_MS = 4000;

/** Why a TCP connection to the stream URL's host fails (`connection refused`, …), or undefined when it does not. */
function reachability(streamUrl: string): Promise<string | undefined> {
  const url = new URL(streamUrl);
  const port = Number(url.port || (url.protocol === 'wss:' ? 443 : 80));
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, timeout: 3000 });
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done('no answer within 3 s'));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' ? 'connection refused' : err.code === 'ENOTFOUND' ? 'no such host' : (err.code ?? err.message)));
  });
}

export function tailCommand(program: Command): void {
  withConnection(
    program
      .command('tail')
      .description("print a session's events live (and resume after a disconnect)")
      .argument('<session>', 'session id')
      .option('--json', 'print each status frame as JSON text, one per line')
      .option('--since <seq>', 'first replay the retained events after this seq (0: all of them)')
      .option(
        '--retry <duration>',
        `how long to keep trying while the server cannot be reached (a number with s, m or h), or forever; without it, tail gives up at once if the first connection fails, and reconnects for ${RECONNECT_BUDGET} once it has been connected`,
      )
      .addHelpText(
        'after',
        '\nExit status: 1 when the token is missing or refused (401), does not cover the session (403), the server\ncould not be reached at first (or for the --retry time); 0 after Ctrl-C.',
      ),
  ).action(async (session: string, flags: TailFlags) => {
    const since = flags.since === undefined ? undefined : Number(flags.since);
    if (since !== undefined && !(Number.isSafeInteger(since) && since >= 0)) program.error(`--since must be a non-negative integer, not ${flags.since}`);
    const retry = flags.retry ?? RECONNECT_BUDGET;
    const retryMs = retry === 'forever' ? Infinity : parseDuration(retry);
    if (retryMs === undefined) program.error(`--retry must be a number with s, m or h (such as 30s), or forever, not ${flags.retry}`);
    // Loaded here, not at the top: `horologium --help` and the other commands start without them.
    const [{ default: WebSocket }, { HorologiumClient }, { eventLine }] = await Promise.all([import('ws'), import('../client/index.js'), import('./event-line.js')]);
    const url = streamUrl(flags.url);
    const paint = palette(process.stdout);
    let stopping = false;
    /** Whether a connection was ever made: before that, a failure without --retry ends the tail. */
    let everConnected = false;
    /** When the server stopped being reachable (no connection opened since); undefined while connected. */
    let downSince: number | undefined = Date.now();
    let toldDown = false;
    /** The first failure of a tail that never connected and has no --retry: one line, exit 1. */
    const neverConnected = (why: string) =>
      fail(`cannot connect to ${url}: ${why} (is the server running there? --retry 30s keeps trying)`);
    const firstConnect =
      flags.retry === undefined
        ? setTimeout(() => neverConnected(`no connection within ${FIRST_CONNECT_MS / 1000} s`), FIRST_CONNECT_MS)
        : undefined;
    const status = (line: string) => {
      if (!flags.json) process.stderr.write(`${paint.dim(line)}\n`);
    };
    /** A sentence on stderr and exit status 1: what went wrong and what to change. */
    const fail = (sentence: string) => {
      if (stopping) return;
      process.stderr.write(`horologium: ${sentence}\n`);
      process.exitCode = 1;
      stop();
    };
    const client = new HorologiumClient({
      url,
      WebSocket,
      ...(flags.token ? { token: flags.token } : {}),
      onOpen: () => {
        everConnected = true;
        clearTimeout(firstConnect);
        downSince = undefined;
        toldDown = false;
      },
      onEvent: (event, frame) => process.stdout.write(`${flags.json ? frame : eventLine(event, paint)}\n`),
      onSubscribed: (info) => {
        status(`subscribed to ${info.session} (epoch ${info.epoch}, head ${info.head})`);
        if (!info.recovered) process.stderr.write(`horologium: events of ${info.session} before ${info.oldest} are no longer retained\n`);
      },
      onError: (error) => {
        if (error.code === 'UNAUTHORIZED') {
          fail(
            flags.token
              ? `the server refused the token (${error.message}): give a valid one with --token or HOROLOGIUM_CLIENT_TOKEN`
              : `the server needs a token: give one with --token or HOROLOGIUM_CLIENT_TOKEN (scope subscribe, covering ${session})`,
          );
        } else if (error.code === 'FORBIDDEN') {
          fail(`the token may not read ${session}: it needs scope subscribe and a sessions pattern that covers ${session} (${error.message})`);
        } else {
          process.stderr.write(`horologium: ${error.code}: ${error.message}\n`);
        }
      },
      onClose: ({ code, reason, willReconnect }) => {
        if (everConnected) status(`disconnected (${code}${reason ? ` ${reason}` : ''})${willReconnect ? '' : '; not reconnecting'}`);
        if (!willReconnect && !stopping) process.exitCode = 1;
        downSince ??= Date.now();
        if (!willReconnect || stopping || toldDown) return;
        toldDown = true;
        void reachability(url).then((why) => {
          if (stopping) return;
          if (!everConnected && flags.retry === undefined) {
            neverConnected(why ?? `the stream closed before it opened (${code})`);
            return;
          }
          if (why === undefined) return;
          const budget = retryMs === Infinity ? 'for ever (--retry forever)' : `for up to ${retry} (--retry)`;
          status(`horologium: cannot reach ${url}: ${why}; retrying ${budget}`);
        });
      },
      onReconnecting: ({ attempt, delayMs }) => {
        if (downSince !== undefined && Date.now() + delayMs - downSince > (retryMs as number)) {
          fail(`gave up: ${url} could not be reached for ${retry} (--retry forever keeps trying)`);
          return;
        }
        if (everConnected) status(`reconnecting in ${delayMs} ms (attempt ${attempt})`);
      },
    });
    client.subscribe(session, since);
    const stop = () => {
      stopping = true;
      clearTimeout(firstConnect);
      client.close();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
