/**
 * `horologium-sdk/ai`: the AI SDK's tools, watched in Horologium with one line (issue 47, part 1).
 *
 *   const tools = withHorologium({ weather, search }, { producer, session: 'chat-1' });
 *   await generateText({ model, tools, prompt });
 *
 * Each tool's `execute` is wrapped: its call is posted as it starts (call_id = the AI SDK's
 * toolCallId, args = its input) and what it returned after it (a thrown error as an is_error
 * result, then thrown on unchanged; a streaming tool's last value). Posting happens in the
 * background (background-poster.ts), so the tool never waits for Horologium and the agent's run is
 * the same with the server down. Tools without `execute` (client-side tools) pass through untouched.
 * Only the AI SDK's types are imported: nothing of `ai` is loaded by this module.
 */
import type { ToolExecutionOptions, ToolSet } from 'ai';
import type { JsonInput, Producer } from '../producer/producer.js';
import { BackgroundPoster, sessionResolver, type PosterOptions } from './background-poster.js';

export interface WithHorologiumOptions extends PosterOptions {
  producer: Producer;
  /** The session: an id, or a function of the tool call (its messages, experimental_context) for one process serving many conversations. */
  session: string | ((call: { toolName: string; options: ToolExecutionOptions }) => string);
  /** What to post as the result of a tool that threw (default `{"error": message}`). */
  error?(err: unknown): JsonInput;
}

/** The poster of each tool set withHorologium made, for flush(). */
const posters = new WeakMap<object, BackgroundPoster>();

const seconds = (since: number) => (performance.now() - since) / 1000;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** The same tool set, each tool with an `execute` posting its call and its result to Horologium. */
export function withHorologium<T extends ToolSet>(tools: T, options: WithHorologiumOptions): T {
  const poster = new BackgroundPoster(options.producer, options);
  const sessionOf = sessionResolver(options.session);
  const errorOf = options.error ?? ((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }));
  const wrapped: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute as ((input: unknown, opts: ToolExecutionOptions) => unknown) | undefined;
    if (typeof execute !== 'function') {
      wrapped[name] = tool;
      continue;
    }
    wrapped[name] = {
      ...tool,
      execute(input: unknown, opts: ToolExecutionOptions) {
        const post = { session: sessionOf({ toolName: name, options: opts }), callId: opts.toolCallId, name, args: (input ?? null) as JsonInput };
        poster.call(post);
        const started = performance.now();
        const failed = (err: unknown) => {
          poster.result({ ...post, result: errorOf(err), isError: true, executionTime: seconds(started) });
          throw err;
        };
        const succeeded = (value: unknown) => {
          poster.result({ ...post, result: (value === undefined ? null : value) as JsonInput, isError: false, executionTime: seconds(started) });
          return value;
        };
        let outcome: unknown;
        try {
          outcome = execute.call(tool, input, opts);
        } catch (err) {
          return failed(err);
        }
        if (isAsyncIterable(outcome)) return streamed(outcome, succeeded, failed);
        if (outcome instanceof Promise || (typeof outcome === 'object' && outcome !== null && typeof (outcome as PromiseLike<unknown>).then === 'function')) {
          return Promise.resolve(outcome).then(succeeded, failed);
        }
        return succeeded(outcome);
      },
    };
  }
  posters.set(wrapped, poster);
  return wrapped as T;
}

/** A streaming tool's values, passed on one by one; the last is posted as its result. */
async function* streamed(values: AsyncIterable<unknown>, succeeded: (v: unknown) => unknown, failed: (e: unknown) => never): AsyncGenerator<unknown> {
  let last: unknown;
  try {
    for await (const value of values) {
      last = value;
      yield value;
    }
  } catch (err) {
    failed(err);
  }
  succeeded(last);
}

/**
 * Waits for the posts of `tools` (what withHorologium returned) still in flight, at most
 * `timeoutMs`: call it before a short-lived process ends.
 */
export async function flush(tools: ToolSet, timeoutMs = 10_000): Promise<void> {
  await posters.get(tools)?.flush(timeoutMs);
}
