/**
 * How the agent-framework integrations post (issue 47, part 6): never in the agent's way. A call
 * and its result are handed over and posted in the background through the application's Producer
 * (its retries, idempotency by call_id, trace context), in order per call_id (the result never
 * before its call). With the server down the agent goes on with the same results; one warning is
 * written for the outage, not one per post, and another only after a post succeeded again.
 * `flush()` waits for what is in flight, bounded by a timeout, for a process about to end.
 */
import type { JsonInput, Producer } from '../producer/producer.js';

export interface PosterOptions {
  /** Where the one warning of an outage goes (default: console.warn). */
  warn?(message: string): void;
}

export interface CallPost {
  session: string;
  callId: string;
  name: string;
  args: JsonInput;
}

export interface ResultPost extends CallPost {
  result: JsonInput;
  isError: boolean;
  /** Seconds the tool ran. */
  executionTime?: number;
}

/** An integration's `session` option, an id or a function of the framework's call, as a function. */
export function sessionResolver<C>(session: string | ((call: C) => string)): (call: C) => string {
  return typeof session === 'function' ? session : () => session;
}

/** Tool input a framework hands over as text: its JSON value when it is JSON, else the text itself. */
export function jsonOrText(text: string): JsonInput {
  try {
    return JSON.parse(text) as JsonInput;
  } catch {
    return text;
  }
}

export class BackgroundPoster {
  /** The last post of each call_id still under way: the next one of that call goes after it. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  /** A warning was written and no post has succeeded since. */
  private warned = false;

  constructor(
    private readonly producer: Producer,
    private readonly options: PosterOptions = {},
  ) {}

  call(post: CallPost): void {
    this.enqueue(post.session, post.callId, () => this.producer.toolCall(post.session, { call_id: post.callId, name: post.name, args: post.args }));
  }

  result(post: ResultPost): void {
    this.enqueue(post.session, post.callId, () =>
      this.producer.toolResult(post.session, {
        call_id: post.callId,
        name: post.name,
        args: post.args,
        result: post.result,
        is_error: post.isError,
        ...(post.executionTime === undefined ? {} : { execution_time: post.executionTime }),
      }),
    );
  }

  /** Resolves once every post handed over so far has ended (sent or given up), or after `timeoutMs`. */
  async flush(timeoutMs = 10_000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all([...this.inFlight]), late]);
    clearTimeout(timer);
  }

  private enqueue(session: string, callId: string, send: () => Promise<unknown>): void {
    const key = `${session}\n${callId}`;
    const before = this.chains.get(key) ?? Promise.resolve();
    const done: Promise<void> = before.then(send).then(
      () => {
        this.warned = false;
      },
      (err: unknown) => this.failed(err),
    );
    this.chains.set(key, done);
    this.inFlight.add(done);
    void done.finally(() => {
      this.inFlight.delete(done);
      if (this.chains.get(key) === done) this.chains.delete(key);
    });
  }

  private failed(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    const message = `horologium: a tool post failed and is dropped (${err instanceof Error ? err.message : String(err)}); the agent goes on, and further failures are not reported until a post succeeds again`;
    (this.options.warn ?? ((m: string) => console.warn(m)))(message);
  }
}
