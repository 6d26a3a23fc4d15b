/**
 * The Horologium stream client for panels and tests, in Node (pass `ws`'s WebSocket) and browsers
 * (the global WebSocket): subscribes, reconnects with jittered exponential backoff, resumes each
 * session from its last seq and epoch, drops duplicates by uuid, ignores 💓, and tells the caller
 * when a resume could not be exact (`recovered: false`).
 */
import { reconnectRule } from '../errors.js';

export interface StatusEvent {
  type: string;
  data: Record<string, unknown>;
  timestamp: number;
  uuid: string;
  session: string;
  seq: number;
}

export interface SubscribedInfo {
  session: string;
  epoch: string;
  head: number;
  oldest: number;
  recovered: boolean;
}

/** The part of the WebSocket API used here: browsers' and `ws`'s both have it. */
interface SocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number): void;
}
type SocketConstructor = new (url: string) => SocketLike;

export interface ClientOptions {
  /** ws:// or wss:// URL of /v1/stream; with several, each reconnect tries the next one. */
  url: string | string[];
  /**
   * The token, sent as the first `auth` message of every connection (so it stays out of URLs and
   * works in browsers, which cannot set headers); a function is asked again at each reconnect.
   */
  token?: string | (() => string | Promise<string>);
  WebSocket?: SocketConstructor;
  onEvent(event: StatusEvent): void;
  /** Every `subscribed` frame; `recovered: false` means events were missed for good. */
  onSubscribed?(info: SubscribedInfo): void;
  onError?(error: { code: string; message: string }): void;
  /**
   * Close codes after which the client does not reconnect. By default the catalog's rule of each
   * code decides (src/errors.ts CLOSE_CODES): `never` stops, `new-token` reconnects only when
   * `token` is a function (asked again for a new one), anything else resumes.
   */
  fatalCloseCodes?: number[];
  backoff?: { initialMs: number; maxMs: number };
}

const DEDUPE_WINDOW = 1024;

export class HorologiumClient {
  private socket: SocketLike | undefined;
  private readonly sessions = new Map<string, { since?: number; epoch?: string; seen: Set<string>; order: string[] }>();
  private attempt = 0;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private connects = 0;
  /** The socket is open and (if a token is configured) `auth` has been sent. */
  private ready = false;

  constructor(private readonly options: ClientOptions) {
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

  /** The last seq received of `session`, if any. */
  lastSeq(session: string): number | undefined {
    return this.sessions.get(session)?.since;
  }

  close(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close(1000);
  }

  private connect(): void {
    const Ctor = this.options.WebSocket ?? (globalThis as unknown as { WebSocket: SocketConstructor }).WebSocket;
    const urls = Array.isArray(this.options.url) ? this.options.url : [this.options.url];
    const socket = new Ctor(urls[this.connects++ % urls.length] as string);
    this.socket = socket;
    socket.onopen = async () => {
      this.attempt = 0;
      if (this.options.token !== undefined) {
        const token = await this.currentToken();
        if (this.socket !== socket) return;
        this.send({ method: 'auth', params: { token } });
      }
      this.ready = true;
      for (const session of this.sessions.keys()) this.sendSubscribe(session);
    };
    socket.onmessage = (ev) => this.receive(String(ev.data));
    socket.onerror = () => undefined;
    socket.onclose = (ev) => {
      this.ready = false;
      if (this.stopped || this.isFatal(ev.code)) return;
      const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 250, maxMs: 30_000 };
      const ceiling = Math.min(maxMs, initialMs * 2 ** this.attempt++);
      this.timer = setTimeout(() => this.connect(), ceiling / 2 + Math.random() * (ceiling / 2));
    };
  }

  private isFatal(code: number): boolean {
    if (this.options.fatalCloseCodes) return this.options.fatalCloseCodes.includes(code);
    const rule = reconnectRule(code);
    return rule === 'never' || (rule === 'new-token' && typeof this.options.token !== 'function');
  }

  /** Sends a new token for the open connection before the current one expires. */
  async refresh(token?: string): Promise<void> {
    this.send({ method: 'refresh', params: { token: token ?? (await this.currentToken()) } });
  }

  private async currentToken(): Promise<string> {
    const t = this.options.token;
    return typeof t === 'function' ? t() : (t ?? '');
  }

  private sendSubscribe(session: string): void {
    const s = this.sessions.get(session);
    // Before auth has been sent, onopen subscribes everything once it has.
    if (!s || !this.ready) return;
    this.send({ method: 'subscribe', params: { session, ...(s.since === undefined ? {} : { since: s.since }), ...(s.epoch ? { epoch: s.epoch } : {}) } });
  }

  private send(message: unknown): void {
    if (this.socket && this.socket.readyState === 1) this.socket.send(JSON.stringify(message));
  }

  private receive(text: string): void {
    if (text === '💓') return;
    let frame: { method?: string; result?: any };
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame.method === 'status') {
      const event = frame.result as StatusEvent;
      const s = this.sessions.get(event.session);
      if (!s || s.seen.has(event.uuid)) return;
      s.seen.add(event.uuid);
      s.order.push(event.uuid);
      if (s.order.length > DEDUPE_WINDOW) s.seen.delete(s.order.shift() as string);
      s.since = Math.max(s.since ?? 0, event.seq);
      this.options.onEvent(event);
    } else if (frame.method === 'subscribed') {
      const info = frame.result as SubscribedInfo;
      const s = this.sessions.get(info.session);
      if (s) {
        s.epoch = info.epoch;
        // A live-only subscription resumes from the head; a failed resume replays from the oldest.
        if (s.since === undefined) s.since = info.head;
        else if (!info.recovered) s.since = Math.max(0, info.oldest - 1);
      }
      this.options.onSubscribed?.(info);
    } else if (frame.method === 'error') {
      this.options.onError?.(frame.result);
    }
  }
}
