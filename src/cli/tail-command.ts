/**
 * `horologium tail <session>`: the session's status events as they happen, through the project's
 * own stream client (so it resumes after a disconnect from the last seq and epoch). One line per
 * event for a person, coloured on a TTY; `--json` prints each status frame's JSON text as it came.
 */
import type { Command } from 'commander';
import WebSocket from 'ws';
import { HorologiumClient } from '../client/index.js';
import { palette } from './colours.js';
import { eventLine } from './event-line.js';
import { streamUrl, withConnection, type ConnectionFlags } from './connection.js';

interface TailFlags extends ConnectionFlags {
  json?: boolean;
  since?: string;
}

export function tailCommand(program: Command): void {
  withConnection(
    program
      .command('tail')
      .description("print a session's events live (and resume after a disconnect)")
      .argument('<session>', 'session id')
      .option('--json', 'print each status frame as JSON text, one per line')
      .option('--since <seq>', 'first replay the retained events after this seq (0: all of them)'),
  ).action((session: string, flags: TailFlags) => {
    const since = flags.since === undefined ? undefined : Number(flags.since);
    if (since !== undefined && !(Number.isSafeInteger(since) && since >= 0)) program.error(`--since must be a non-negative integer, not ${flags.since}`);
    const paint = palette(process.stdout);
    let stopping = false;
    const status = (line: string) => {
      if (!flags.json) process.stderr.write(`${paint.dim(line)}\n`);
    };
    const client = new HorologiumClient({
      url: streamUrl(flags.url),
      WebSocket,
      ...(flags.token ? { token: flags.token } : {}),
      onEvent: (event, frame) => process.stdout.write(`${flags.json ? frame : eventLine(event, paint)}\n`),
      onSubscribed: (info) => {
        status(`subscribed to ${info.session} (epoch ${info.epoch}, head ${info.head})`);
        if (!info.recovered) process.stderr.write(`horologium: events of ${info.session} before ${info.oldest} are no longer retained\n`);
      },
      onError: (error) => process.stderr.write(`horologium: ${error.code}: ${error.message}\n`),
      onClose: ({ code, reason, willReconnect }) => {
        status(`disconnected (${code}${reason ? ` ${reason}` : ''})${willReconnect ? '' : '; not reconnecting'}`);
        if (!willReconnect && !stopping) process.exitCode = 1;
      },
      onReconnecting: ({ attempt, delayMs }) => status(`reconnecting in ${delayMs} ms (attempt ${attempt})`),
    });
    client.subscribe(session, since);
    const stop = () => {
      stopping = true;
      client.close();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
