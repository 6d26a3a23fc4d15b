/**
 * `horologium sessions`: the sessions the token covers, most recently active first (section 9),
 * one line each, or `--json` with one summary per line; `--all` follows the pages to the end.
 */
import type { Command } from 'commander';
import { HttpClient } from '../producer/http.js';
import type { SessionSummaryJson } from '../wire/sessions.js';
import { palette } from './colours.js';
import { httpOptions, integerFlag, reportingErrors, withConnection, type ConnectionFlags } from './connection.js';

interface SessionsFlags extends ConnectionFlags {
  prefix?: string;
  limit: string;
  all?: boolean;
  json?: boolean;
}

export function sessionsCommand(program: Command): void {
  withConnection(
    program
      .command('sessions')
      .description('list sessions, most recently active first')
      .option('--prefix <prefix>', 'only sessions whose id starts with this')
      .option('--limit <n>', 'sessions per page (at most 500)', '50')
      .option('--all', 'follow every page, not just the first')
      .option('--json', 'one JSON summary per line'),
  ).action(
    reportingErrors(async (flags: SessionsFlags) => {
      const limit = integerFlag(flags.limit, '--limit', 1);
      const http = new HttpClient(httpOptions(flags));
      const paint = palette(process.stdout);
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ limit: String(limit) });
        if (flags.prefix !== undefined) query.set('prefix', flags.prefix);
        if (cursor !== null) query.set('cursor', cursor);
        const reply = await http.request({ method: 'GET', path: `/v1/sessions?${query}` });
        const page = JSON.parse(reply.text) as { sessions: SessionSummaryJson[]; next: string | null };
        for (const s of page.sessions) {
          process.stdout.write(
            flags.json
              ? `${JSON.stringify(s)}\n`
              : `${paint.bold(s.session)}  events ${s.head}  queue ${s.committed}/${s.queue_head} acked  ${paint.dim(`last ${s.last_event_at}`)}\n`,
          );
        }
        cursor = page.next;
      } while (flags.all && cursor !== null);
      if (cursor !== null && !flags.json) process.stderr.write(`${paint.dim('more sessions: --all lists every page')}\n`);
    }),
  );
}
