/**
 * `horologium sessions`: the sessions the token covers, most recently active first (section 9),
 * as aligned columns, or `--json` with one summary per line; `--all` follows the pages to the end.
 */
import { Option, type Command } from 'commander';
import { HttpClient } from '../sdk-common/http-client.js';
import type { SessionSummaryJson } from '../wire/sessions.js';
import { palette } from './colours.js';
import { httpOptions, integerFlag, reportingErrors, withConnection, type ConnectionFlags } from './connection.js';

interface SessionsFlags extends ConnectionFlags {
  prefix?: string;
  limit: string;
  all?: boolean;
  json?: boolean;
  state?: string;
}

const HEADER = ['SESSION', 'STATE', 'EVENTS', 'ACKED/QUEUE', 'LAST EVENT'] as const;

/** A session's state in words (v1.2 counts; a server before v1.2 sends none: "-"). */
function stateWords(s: Partial<Pick<SessionSummaryJson, 'open_calls' | 'errors'>>): string {
  if (s.open_calls === undefined || s.errors === undefined) return '-';
  const words = [...(s.open_calls > 0 ? [`running ${s.open_calls}`] : []), ...(s.errors > 0 ? [`failed ${s.errors}`] : [])];
  return words.length > 0 ? words.join(', ') : 'idle';
}

/** One page as aligned columns (the header on the first page only): words to the left, numbers to the right. */
function table(sessions: SessionSummaryJson[], first: boolean, paint: ReturnType<typeof palette>): string {
  const rows = sessions.map((s) => [s.session, stateWords(s), String(s.head), `${s.committed}/${s.queue_head}`, s.last_event_at]);
  const all = first ? [[...HEADER], ...rows] : rows;
  const width = HEADER.map((_, k) => Math.max(...all.map((r) => (r[k] as string).length)));
  const line = (r: string[]) =>
    [(r[0] as string).padEnd(width[0] as number), (r[1] as string).padEnd(width[1] as number), (r[2] as string).padStart(width[2] as number), (r[3] as string).padStart(width[3] as number), r[4]].join('  ');
  return all.map((r, k) => `${first && k === 0 ? paint.dim(line(r)) : line(r)}\n`).join('');
}

export function sessionsCommand(program: Command): void {
  withConnection(
    program
      .command('sessions')
      .description('list sessions, most recently active first')
      .option('--prefix <prefix>', 'only sessions whose id starts with this')
      .option('--limit <n>', 'sessions per page (at most 500)', '50')
      .addOption(new Option('--state <state>', 'only running (open calls), failed (errors) or idle sessions').choices(['running', 'failed', 'idle']))
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
        if (flags.state !== undefined) query.set('state', flags.state);
        if (cursor !== null) query.set('cursor', cursor);
        const reply = await http.request({ method: 'GET', path: `/v1/sessions?${query}` });
        const page = JSON.parse(reply.text) as { sessions: SessionSummaryJson[]; next: string | null };
        if (flags.json) for (const s of page.sessions) process.stdout.write(`${JSON.stringify(s)}\n`);
        else process.stdout.write(table(page.sessions, cursor === null, paint));
        cursor = page.next;
      } while (flags.all && cursor !== null);
      if (cursor !== null && !flags.json) process.stderr.write(`${paint.dim('more sessions: --all lists every page')}\n`);
    }),
  );
}
