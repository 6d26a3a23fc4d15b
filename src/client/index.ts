/**
 * The Horologium stream client for panels and tests, in browsers and Node 22+ (the global WebSocket)
 * and Node 20 (the optional peer `ws`, loaded by socket-constructor.ts, or a class passed in). It subscribes, reconnects with full-jitter exponential backoff (trying
 * each URL in turn), resumes each session from its last seq and epoch, drops duplicates by uuid,
 * ignores 💓, and tells the caller what happens: open, subscribed (with `recovered`), errors
 * (with the session they are about, and a refused or expired token), close (and whether it will
 * reconnect), reconnecting (attempt and delay), unsubscribed, and (with `watchSessions`) changes
 * of the sessions list, watched again on every new connection. With a token *function*, a JWT is
 * renewed with `refresh` before its `exp`, so a long-lived panel survives expiry without
 * reconnecting. A handler that throws is reported and never stops the client. What to do after
 * each close code comes from the catalog (src/common/errors.ts), not from literals here.
 */
import { CLOSE_CODES, reconnectRule } from '../common/errors.js';
import type { SessionSummaryJson } from '../wire/sessions.js';
import { fullJitterDelay, type Backoff } from '../sdk-common/backoff.js';
import { socketConstructor } from './socket-constructor.js';

/** A `session` frame of `watch_sessions`: a session's summary now, or its deletion. */
export type SessionChange = (SessionSummaryJson & { deleted?: undefined }) | { session: string; deleted: true };
export type { SessionSummaryJson };

/** What every status event carries beside its type and data (docs/protocol.md section 5). */
interface StatusEventOf<T extends string, D> {
  type: T;
  data: D;
  /** Seconds since the epoch, with a fraction (set when the event was accepted). */
  timestamp: number;
  uuid: string;
  session: string;
  seq: number;
}

/** `tool_starting`'s data (docs/protocol.md section 4). */
export interface ToolStartingData {
  name: string;
  call_id: string;
  /** A one-line echo of the arguments, at most 120 characters ("" when the call sent none). */
  args: string;
  /** The arguments as sent, every string longer than the preview limit truncated; null when none were sent. */
  arguments: unknown;
}

/** `tool_completed`'s data (docs/protocol.md section 4). */
export interface ToolCompletedData {
  name: string;
  call_id: string;
  /** Seconds: the producer's, or measured from the tool-calls; null when neither is known. */
  execution_time: number | null;
  is_error: boolean;
  /** The preview: a `read_file` object as sent, otherwise text of at most the preview limit. */
  result: string | Record<string, unknown>;
  /** As in tool_starting: from this result's body, or from the earlier tool-calls. */
  arguments: unknown;
  /** v1.2: UTF-8 bytes of the full result's JSON text (the queue entry's message.content). Absent on events stored before v1.2. */
  result_bytes?: number;
  /** v1.2: true exactly when truncation cut the preview. Absent on events stored before v1.2: treat a preview as possibly cut. */
  truncated?: boolean;
}

export type ToolStartingEvent = StatusEventOf<'tool_starting', ToolStartingData>;
export type ToolCompletedEvent = StatusEventOf<'tool_completed', ToolCompletedData>;
/** Any other event a producer published: its own type and data object. */
export type OtherStatusEvent = StatusEventOf<string, Record<string, unknown>>;

/**
 * A status event, by type. (`type` of an other event is any string, so TypeScript cannot narrow on
 * `event.type === 'tool_starting'` alone: use isToolStarting / isToolCompleted.)
 */
export type StatusEvent = ToolStartingEvent | ToolCompletedEvent | OtherStatusEvent;

export function isToolStarting(event: StatusEvent): event is ToolStartingEvent {
  return event.type === 'tool_starting';
}

export function isToolCompleted(event: StatusEvent): event is ToolCompletedEvent {
  return event.type === 'tool_completed';
}

export interface SubscribedInfo {
  session: string;
  epoch: string;
  head: number;
  oldest: number;
  recovered: boolean;
}

export interface ClientError {
  /** An error frame's code, or UNAUTHORIZED / FORBIDDEN when the server closed for the token. */
  code: string;
  message: string;
  session?: string;
}

/** What a socket event may carry; each of the two WebSocket APIs passes a richer object. */
export interface SocketEvent {
  type: string;
  data?: unknown;
  code?: number;
  reason?: string;
}

/**
 * The part of the WebSocket API used here. Methods (not function-valued properties), so that both
 * `ws`'s WebSocket and the browser's fit this type without a cast.
 */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: SocketEvent) => void): void;
}
/**
 * A WebSocket class: `ws`'s and the browser's both fit. Any parameter list is accepted because
 * `ws` declares several constructor overloads; the client calls it with the URL alone.
 */
export type SocketConstructor = new (...args: never[]) => SocketLike;

export interface ClientOptions {
  /** ws:// or wss:// URL of /v1/stream; with several, each reconnect tries the next one. */
  url: string | string[];
  /**
   * The token, sent as the first `auth` message of every connection (it stays out of URLs and works
   * in browsers, which cannot set headers). A function is asked again at each connection and before
   * a JWT's `exp` (see `refreshBeforeMs`).
   */
  token?: string | (() => string | Promise<string>);
  /** A WebSocket class; when omitted, the global one (browsers, Node 22+), else the `ws` package if installed. */
  WebSocket?: SocketConstructor;
  /** Each status event once, in seq order; `frame` is the frame's JSON text exactly as received. */
  onEvent(event: StatusEvent, frame: string): void;
  /** Every `subscribed` frame; `recovered: false` means events were missed for good. */
  onSubscribed?(info: SubscribedInfo): void;
  /** Error frames, and a token the server refused (code UNAUTHORIZED or FORBIDDEN). */
  onError?(error: ClientError): void;
  onOpen?(info: { url: string }): void;
  onClose?(info: { code: number; reason: string; willReconnect: boolean }): void;
  onReconnecting?(info: { attempt: number; delayMs: number; url: string }): void;
  /**
   * A subscription the server ended (`reason: "deleted"`: the session was deleted). The client
   * subscribes again from seq 0, so it follows the session's next incarnation.
   */
  onUnsubscribed?(info: { session: string; reason?: string }): void;
  /** With `watchSessions`: a session was created, got an event, or was deleted (section 9). */
  onSession?(change: SessionChange): void;
  /** A handler above threw; by default reported on the console. The client goes on. */
  onHandlerError?(error: unknown, handler: string): void;
  /**
   * Close codes after which the client does not reconnect. By default the catalog's rule of each
   * code decides (src/common/errors.ts CLOSE_CODES): `never` stops, `new-token` reconnects only when
   * `token` is a function (asked again for a new one), anything else resumes.
   */
  fatalCloseCodes?: number[];
  /** Full-jitter backoff: each delay is random in [0, min(maxMs, initialMs * 2^attempt)]. */
  backoff?: Backoff;
  /** With a token function: how long before a JWT's `exp` to send `refresh` (default 30 s). */
  refreshBeforeMs?: number;
}

interface SessionState {
  since?: number;
  epoch?: string;
  seen: Set<string>;
  order: string[];
}

const DEDUPE_WINDOW = 1024;
const OPEN = 1;

/** A JWT's `exp` (seconds), or undefined for a token that is not a JWT or has none. */
export function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (token.split('.').length !== 3 || !payload) return undefined;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const exp = (JSON.parse(atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), '='))) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}

export class HorologiumClient {
  private socket: SocketLike | undefined;
  private readonly sessions = new Map<string, SessionState>();
  private readonly urls: string[];
  private attempt = 0;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private connects = 0;
  /** The `watch_sessions` prefix ('' for all), sent again on every connection; undefined: not watching. */
  private watching: string | undefined;
  /** The socket is open and (if a token is configured) `auth` has been sent. */
  private ready = false;

  private readonly Socket: new (url: string) => SocketLike;

  constructor(private readonly options: ClientOptions) {
    this.urls = Array.isArray(options.url) ? options.url : [options.url];
    this.Socket = socketConstructor(options.WebSocket) as unknown as new (url: string) => SocketLike;
    this.connect();
  }

  /** Subscribes to `session`; `since` 0 replays everything retained, omitted means live only. */
  subscribe(session: string, since?: number): void {
    this.sessions.set(session, { ...(since === undefined ? {} : { since }), seen: new Set(), order: [] });
    this.sendSubscribe(session);
  }

  unsubscribe(session: string): void {
    this.sessions.delete(session);
    this.send({ method: 'unsubscribe', params: { session } });
  }

  /**
   * Follows the sessions list (those the token covers, starting with `prefix` if given): each change
   * arrives at `onSession`, at most once a second per session. Kept across reconnects.
   */
  watchSessions(prefix?: string): void {
    this.watching = prefix ?? '';
    this.sendWatch();
  }

  unwatchSessions(): void {
    this.watching = undefined;
    this.send({ method: 'unwatch_sessions' });
  }

  /** The last seq received of `session`, if any. */
  lastSeq(session: string): number | undefined {
    return this.sessions.get(session)?.since;
  }

  close(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.refreshTimer);
    this.socket?.close(CLOSE_CODES.NORMAL.code);
  }

  /** Sends a new token for the open connection before the current one expires. */
  async refresh(token?: string): Promise<void> {
    const next = token ?? (await this.currentToken());
    this.send({ method: 'refresh', params: { token: next } });
  }

  private connect(): void {
    const url = this.urls[this.connects++ % this.urls.length] as string;
    const socket = new this.Socket(url);
    this.socket = socket;
    socket.addEventListener('open', () => void this.opened(socket, url));
    socket.addEventListener('message', (ev) => this.receive(String(ev.data)));
    socket.addEventListener('error', () => undefined);
    socket.addEventListener('close', (ev) => this.closed(socket, ev.code ?? 1006, ev.reason ?? ''));
  }

  private async opened(socket: SocketLike, url: string): Promise<void> {
    this.attempt = 0;
    if (this.options.token !== undefined) {
      const token = await this.currentToken();
      if (this.socket !== socket) return;
      this.send({ method: 'auth', params: { token } });
      this.scheduleRefresh(jwtExpiry(token));
    }
    this.ready = true;
    this.call('onOpen', () => this.options.onOpen?.({ url }));
    for (const session of this.sessions.keys()) this.sendSubscribe(session);
    this.sendWatch();
  }

  private closed(socket: SocketLike, code: number, reason: string): void {
    if (this.socket !== socket) return;
    this.ready = false;
    clearTimeout(this.refreshTimer);
    if (code === CLOSE_CODES.UNAUTHORIZED.code || code === CLOSE_CODES.FORBIDDEN.code) {
      const error: ClientError = { code: code === CLOSE_CODES.UNAUTHORIZED.code ? 'UNAUTHORIZED' : 'FORBIDDEN', message: reason || 'the token was refused' };
      this.call('onError', () => this.options.onError?.(error));
    }
    const willReconnect = !this.stopped && !this.isFatal(code);
    this.call('onClose', () => this.options.onClose?.({ code, reason, willReconnect }));
    if (!willReconnect) return;
    const attempt = ++this.attempt;
    const delayMs = fullJitterDelay(this.options.backoff ?? { initialMs: 250, maxMs: 30_000 }, attempt);
    const url = this.urls[this.connects % this.urls.length] as string;
    this.call('onReconnecting', () => this.options.onReconnecting?.({ attempt, delayMs, url }));
    this.timer = setTimeout(() => this.connect(), delayMs);
  }

  private isFatal(code: number): boolean {
    if (this.options.fatalCloseCodes) return this.options.fatalCloseCodes.includes(code);
    const rule = reconnectRule(code);
    return rule === 'never' || (rule === 'new-token' && typeof this.options.token !== 'function');
  }

  /** With a token function, renews the token `refreshBeforeMs` before `exp` (seconds). */
  private scheduleRefresh(exp: number | null | undefined): void {
    clearTimeout(this.refreshTimer);
    if (typeof this.options.token !== 'function' || exp === undefined || exp === null) return;
    const delay = Math.max(0, exp * 1000 - (this.options.refreshBeforeMs ?? 30_000) - Date.now());
    this.refreshTimer = setTimeout(() => {
      this.refresh().catch((err: unknown) => this.report(err, 'token'));
    }, delay);
  }

  private async currentToken(): Promise<string> {
    const t = this.options.token;
    return typeof t === 'function' ? t() : (t ?? '');
  }

  private sendSubscribe(session: string): void {
    const s = this.sessions.get(session);
    // Before auth has been sent, `opened` subscribes everything once it has.
    if (!s || !this.ready) return;
    this.send({ method: 'subscribe', params: { session, ...(s.since === undefined ? {} : { since: s.since }), ...(s.epoch ? { epoch: s.epoch } : {}) } });
  }

  private sendWatch(): void {
    if (this.watching === undefined || !this.ready) return;
    this.send({ method: 'watch_sessions', ...(this.watching === '' ? {} : { params: { prefix: this.watching } }) });
  }

  private send(message: unknown): void {
    if (this.socket && this.socket.readyState === OPEN) this.socket.send(JSON.stringify(message));
  }

  /** Runs a caller's handler; what it throws is reported, and the client goes on. */
  private call(handler: string, run: () => void): void {
    try {
      run();
    } catch (err) {
      this.report(err, handler);
    }
  }

  private report(err: unknown, handler: string): void {
    try {
      if (this.options.onHandlerError) this.options.onHandlerError(err, handler);
      else console.error(`horologium client: ${handler} threw`, err);
    } catch {
      // A reporter that throws too has nowhere left to report to.
    }
  }

  private receive(text: string): void {
    if (text === '💓') return;
    let frame: { method?: string; result?: any };
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    switch (frame.method) {
      case 'status': {
        const event = frame.result as StatusEvent;
        const s = this.sessions.get(event.session);
        if (!s || s.seen.has(event.uuid)) return;
        s.seen.add(event.uuid);
        s.order.push(event.uuid);
        if (s.order.length > DEDUPE_WINDOW) s.seen.delete(s.order.shift() as string);
        s.since = Math.max(s.since ?? 0, event.seq);
        this.call('onEvent', () => this.options.onEvent(event, text));
        return;
      }
      case 'subscribed': {
        const info = frame.result as SubscribedInfo;
        const s = this.sessions.get(info.session);
        if (s) {
          s.epoch = info.epoch;
          // A live-only subscription resumes from the head; a failed resume replays from the oldest.
          if (s.since === undefined) s.since = info.head;
          else if (!info.recovered) s.since = Math.max(0, info.oldest - 1);
        }
        this.call('onSubscribed', () => this.options.onSubscribed?.(info));
        return;
      }
      case 'unsubscribed': {
        const info = frame.result as { session: string; reason?: string };
        this.call('onUnsubscribed', () => this.options.onUnsubscribed?.(info));
        // The server ended it (a deletion): follow the session's next incarnation from its start.
        if (info.reason === 'deleted' && this.sessions.has(info.session)) this.subscribe(info.session, 0);
        return;
      }
      case 'session':
        this.call('onSession', () => this.options.onSession?.(frame.result as SessionChange));
        return;
      case 'refreshed':
        this.scheduleRefresh((frame.result as { exp: number | null }).exp);
        return;
      case 'error':
        this.call('onError', () => this.options.onError?.(frame.result as ClientError));
        return;
    }
  }
}
