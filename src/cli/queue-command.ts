/**
 * `horologium queue <session>`: one read of the session's model queue (from the committed cursor
 * unless `--after`), one line per entry with its `message.content` (the result's exact JSON text),
 * or `--json` for the reply as the server sent it; `--ack` then commits the cursor through the
 * last entry shown.
 */
import type { Command } from 'commander';
import { HttpClient } from '../sdk-common/http-client.js';
import type { QueueBatch } from '../producer/consumer.js';
import { palette } from './colours.js';
import { httpOptions, integerFlag, reportingErrors, withConnection, type ConnectionFlags } from './connection.js';

interface QueueFlags extends ConnectionFlags {
  after?: string;
  limit: string;
  wait: string;
  ack?: boolean;
  json?: boolean;
}

export function queueCommand(program: Command): void {
  withConnection(
    program
      .command('queue')
      .description("read a session's model queue, and optionally acknowledge what was read")
      .argument('<session>', 'session id')
      .option('--after <seq>', 'entries after this queue_seq (default: the committed cursor)')
      .option('--limit <n>', 'at most this many entries (at most 1000)', '100')
      .option('--wait <seconds>', 'wait up to this long for a first entry (at most 60)', '0')
      .option('--ack', 'commit the cursor through the last entry read')
      .option('--json', 'print the reply as the server sent it'),
  ).action(
    reportingErrors(async (session: string, flags: QueueFlags) => {
      const wait = integerFlag(flags.wait, '--wait', 0);
      const query = new URLSearchParams({ limit: String(integerFlag(flags.limit, '--limit', 1)), wait: String(wait) });
      if (flags.after !== undefined) query.set('after', String(integerFlag(flags.after, '--after', 0)));
      const http = new HttpClient(httpOptions(flags));
      const path = `/v1/sessions/${encodeURIComponent(session)}/queue`;
      const reply = await http.request({ method: 'GET', path: `${path}?${query}`, extraTimeoutMs: wait * 1000 });
      const batch = JSON.parse(reply.text) as QueueBatch;
      const paint = palette(process.stdout);
      if (flags.json) process.stdout.write(`${reply.text}\n`);
      else {
        for (const e of batch.entries) {
          const mark = e.is_error ? paint.red('✗') : paint.green('✓');
          process.stdout.write(`${paint.dim(`#${e.queue_seq}`)} ${mark} ${paint.bold(e.name)} ${paint.dim(e.call_id)} ${e.message.content}\n`);
        }
        process.stderr.write(`${paint.dim(`${batch.entries.length} ${batch.entries.length === 1 ? 'entry' : 'entries'}; committed ${batch.committed}, head ${batch.head}`)}\n`);
      }
      const last = batch.entries.at(-1);
      if (flags.ack && last) {
        const acked = await http.request({ method: 'POST', path: `${path}/ack`, body: JSON.stringify({ through: last.queue_seq }) });
        if (!flags.json) process.stderr.write(`${paint.dim(`acknowledged through ${(JSON.parse(acked.text) as { committed: number }).committed}`)}\n`);
      }
    }),
  );
}
