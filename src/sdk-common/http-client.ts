/**
 * The HTTP side of the producer SDK and the queue consumer: one request with a timeout, retried
 * with full-jitter backoff on what is worth retrying (the server unreachable, a connection cut, a
 * timeout, 429 and 503 with their `Retry-After`, a proxy's 502 or 504), trying the next base URL
 * after a connection error. Any other error reply becomes a HorologiumRequestError carrying the
 * section 4 envelope's code. Only `fetch` is used, so this runs in Node 20+ and in browsers.
 */
import { fullJitterDelay, type Backoff } from './backoff.js';
import { injectTraceContext } from './trace-context.js';

export interface HttpOptions {
  /** Base URL(s) of the server, such as `http://127.0.0.1:8080`; connection errors rotate through them. */
  url: string | string[];
  /** A token sent as `Authorization: Bearer`; a function is asked before each request (it may cache). */
  token?: string | (() => string | Promise<string>);
  /** Per attempt, in ms (default 30 s; a long-poll adds its wait to this). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 8) and their backoff (default 100 ms doubling to 5 s). */
  retries?: number;
  backoff?: Backoff;
  /** Called before each retry, with the reason; for logs. */
  onRetry?(info: { attempt: number; delayMs: number; reason: string; url: string }): void;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

/** An error reply (or a request that ran out of retries), with the server's code when it sent one. */
export class HorologiumRequestError extends Error {
  override readonly name: string = 'HorologiumRequestError';
  constructor(
    /** HTTP status; 0 when no reply came (connection refused, cut, timed out). */
    readonly status: number,
    /** The envelope's `error.code`, or `NETWORK_ERROR` / `TIMEOUT` / `HTTP_<status>`. */
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** A `call_id` reused with a different name, args or result (409 CALL_ID_CONFLICT): never retried. */
export class CallIdConflictError extends HorologiumRequestError {
  override readonly name = 'CallIdConflictError';
  /** `serverMessage` names the call_id and what differs. */
  constructor(
    readonly callId: string,
    serverMessage: string,
  ) {
    super(409, 'CALL_ID_CONFLICT', serverMessage);
  }
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query, starting with `/`. */
  path: string;
  /** A body built once and sent as is on every attempt (a Blob is not copied again per retry). */
  body?: Blob | string;
  /** Extra time the server may take (a long-poll's wait). */
  extraTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface Reply {
  status: number;
  text: string;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const DEFAULT_BACKOFF: Backoff = { initialMs: 100, maxMs: 5_000 };
/** A `Retry-After` is honoured up to this; a longer one is the backoff's ceiling's business. */
const MAX_RETRY_AFTER_MS = 60_000;

export class HttpClient {
  private readonly urls: string[];
  private next = 0;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: HttpOptions) {
    this.urls = (Array.isArray(options.url) ? options.url : [options.url]).map((u) => u.replace(/\/+$/, ''));
    if (this.urls.length === 0) throw new TypeError('at least one server URL is needed');
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** A 2xx reply, after retries; anything else throws HorologiumRequestError. */
  async request(spec: RequestSpec): Promise<Reply> {
    const retries = this.options.retries ?? 8;
    for (let attempt = 0; ; attempt++) {
      const url = this.urls[this.next % this.urls.length] as string;
      const outcome = await this.attempt(url, spec);
      if ('reply' in outcome) return outcome.reply;
      if (!outcome.retry || attempt >= retries || spec.signal?.aborted) throw outcome.error;
      if (outcome.rotate) this.next++;
      const delayMs = outcome.retryAfterMs ?? fullJitterDelay(this.options.backoff ?? DEFAULT_BACKOFF, attempt + 1);
      this.options.onRetry?.({ attempt: attempt + 1, delayMs, reason: outcome.error.message, url });
      await sleep(delayMs, spec.signal);
    }
  }

  private async attempt(
    base: string,
    spec: RequestSpec,
  ): Promise<{ reply: Reply } | { error: HorologiumRequestError; retry: boolean; rotate?: boolean; retryAfterMs?: number }> {
    const timeoutMs = (this.options.timeoutMs ?? 30_000) + (spec.extraTimeoutMs ?? 0);
    // A timer cleared with the reply (AbortSignal.timeout's would stay armed for the whole timeout).
    const expiry = new AbortController();
    const timeout = expiry.signal;
    const timer = setTimeout(() => expiry.abort(), timeoutMs);
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    const token = await this.token();
    if (token) headers.authorization = `Bearer ${token}`;
    await injectTraceContext(headers);
    let response: Response;
    let text: string;
    try {
      response = await this.fetch(base + spec.path, { method: spec.method, headers, body: spec.body ?? null, signal });
      text = await response.text();
    } catch (err) {
      if (spec.signal?.aborted) return { error: new HorologiumRequestError(0, 'ABORTED', 'the request was aborted'), retry: false };
      if (timeout.aborted) {
        return { error: new HorologiumRequestError(0, 'TIMEOUT', `${spec.method} ${base}${spec.path}: no reply within ${timeoutMs} ms`), retry: true, rotate: true };
      }
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as Error).message;
      return { error: new HorologiumRequestError(0, 'NETWORK_ERROR', `${spec.method} ${base}${spec.path}: ${why}`), retry: true, rotate: true };
    } finally {
      clearTimeout(timer);
    }
    if (response.ok) return { reply: { status: response.status, text } };
    const error = errorOf(response.status, text, `${spec.method} ${spec.path}`);
    if (!RETRY_STATUSES.has(response.status)) return { error, retry: false };
    const retryAfterMs = retryAfter(response.headers.get('retry-after'));
    return { error, retry: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }

  private async token(): Promise<string | undefined> {
    const t = this.options.token;
    return typeof t === 'function' ? t() : t;
  }
}

/** The section 4 envelope of an error reply, or what can be said without one (a proxy's HTML page). */
function errorOf(status: number, text: string, what: string): HorologiumRequestError {
  try {
    const { error } = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    if (error && typeof error.code === 'string') {
      return new HorologiumRequestError(status, error.code, `${what}: ${status} ${error.code}: ${String(error.message ?? '')}`, error.details);
    }
  } catch {
    // Not JSON: said below.
  }
  return new HorologiumRequestError(status, `HTTP_${status}`, `${what}: ${status} ${text.slice(0, 200)}`);
}

/** `Retry-After` as seconds or an HTTP date, in ms, capped; undefined when absent or unreadable. */
export function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) && header.trim() !== '' ? seconds * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.round(ms)));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
