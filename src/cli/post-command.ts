/**
 * `horologium post <session> call|result|event`: one post through the producer SDK, for trying
 * things out. JSON values (`--args`, `--result`, `--data`) are sent as the text given, byte for
 * byte; the main value may come from stdin instead (`… result --name grep < result.json`).
 */
import type { Command } from 'commander';
import { Producer } from '../producer/producer.js';
import { rawJson } from '../producer/raw-json.js';
import { httpOptions, reportingErrors, UsageError, withConnection, type ConnectionFlags } from './connection.js';

interface PostFlags extends ConnectionFlags {
  callId?: string;
  name?: string;
  args?: string;
  result?: string;
  executionTime?: string;
  error?: boolean;
  type?: string;
  data?: string;
}

const KINDS = ['call', 'result', 'event'] as const;

async function stdinText(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? undefined : text;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new UsageError(`${what} is needed`);
  return value;
}

export function postCommand(program: Command): void {
  withConnection(
    program
      .command('post')
      .description('post a tool call, a tool result or an event (JSON values from flags, or the main one from stdin)')
      .argument('<session>', 'session id')
      .argument('<kind>', `one of ${KINDS.join(', ')}`)
      .option('--call-id <id>', 'call id (call: generated when omitted; result: required)')
      .option('--name <tool>', 'tool name (call and result)')
      .option('--args <json>', 'tool arguments as JSON (call: read from stdin when omitted and stdin is not a terminal)')
      .option('--result <json>', 'the result as JSON (result: read from stdin when omitted)')
      .option('--execution-time <seconds>', 'execution time in seconds (result)')
      .option('--error', 'the result is an error (result)')
      .option('--type <type>', 'event type (event)')
      .option('--data <json>', 'event data, a JSON object (event: read from stdin when omitted)')
      .addHelpText(
        'after',
        `
Examples:
  horologium post s1 call --call-id c1 --name grep --args '{"q":"x"}'
  horologium post s1 result --call-id c1 --name grep --result '{"content":"found"}'
  echo '{"step":1}' | horologium post s1 event --type progress`,
      ),
  ).action(
    reportingErrors(async (session: string, kind: string, flags: PostFlags) => {
      if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`kind must be one of ${KINDS.join(', ')}, not ${kind}`);
      const producer = new Producer(httpOptions(flags));
      let reply: unknown;
      if (kind === 'call') {
        const args = flags.args ?? (await stdinText());
        reply = await producer.toolCall(session, {
          ...(flags.callId === undefined ? {} : { call_id: flags.callId }),
          name: required(flags.name, '--name'),
          ...(args === undefined ? {} : { args: rawJson(args) }),
        });
      } else if (kind === 'result') {
        const result = required(flags.result ?? (await stdinText()), '--result (or the result on stdin)');
        const seconds = flags.executionTime === undefined ? undefined : Number(flags.executionTime);
        if (seconds !== undefined && !Number.isFinite(seconds)) throw new UsageError(`--execution-time must be a number of seconds, not ${flags.executionTime}`);
        reply = await producer.toolResult(session, {
          call_id: required(flags.callId, '--call-id'),
          name: required(flags.name, '--name'),
          result: rawJson(result),
          ...(flags.args === undefined ? {} : { args: rawJson(flags.args) }),
          ...(seconds === undefined ? {} : { execution_time: seconds }),
          ...(flags.error ? { is_error: true } : {}),
        });
      } else {
        const data = required(flags.data ?? (await stdinText()), '--data (or the data on stdin)');
        reply = await producer.event(session, { type: required(flags.type, '--type'), data: rawJson(data) });
      }
      process.stdout.write(`${JSON.stringify(reply)}\n`);
    }),
  );
}
