/**
 * The client side of the stream protocol (docs/protocol.md, "Stream"): what a client may send, parsed
 * once into a typed request (from a text message, or from the upgrade URL's `?session=&since=&epoch=`),
 * and what each request does on one connection: `auth` first when the upgrade carried no token,
 * then `subscribe`, `unsubscribe`, `refresh`, with an error frame for anything else. Admission
 * (origin, limits, the upgrade's token) is the route's; fan-out is the hub's.
 */
import { AuthError, type AuthFailureKind, type Authenticator } from '../auth/authenticator.js';
import { coversSession, hasScope, type Principal } from '../auth/principal.js';
import { StreamAuth, type AuthExpiry } from '../auth/stream-auth.js';
import type { FrameErrorCode } from '../common/errors.js';
import { refreshedFrame, HEARTBEAT } from '../wire/frames.js';
import {
  authMessageSchema,
  SESSION_ID,
  subscribeMessageSchema,
  unsubscribeMessageSchema,
  unwatchSessionsMessageSchema,
  watchSessionsMessageSchema,
} from '../wire/schemas.js';
import type { Connection } from './connection.js';
import type { SessionWatch } from './session-watch.js';

export interface SubscribeRequest {
  method: 'subscribe';
  session: string;
  since?: number;
  epoch?: string;
}

export type StreamRequest =
  | SubscribeRequest
  | { method: 'unsubscribe'; session: string }
  | { method: 'auth' | 'refresh'; token: string }
  | { method: 'watch_sessions'; prefix?: string }
  | { method: 'unwatch_sessions' };

/** A message that is not a request, with the error frame that answers it. */
export interface RequestError {
  error: FrameErrorCode;
  message: string;
  /** The method it named, when it named a known one. */
  method?: string;
  session?: string;
}

const METHODS = 'subscribe, unsubscribe, auth, refresh, watch_sessions, unwatch_sessions';

/** Parses one client text message. */
export function parseMessage(text: string): StreamRequest | RequestError {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { error: 'INVALID_JSON', message: 'client messages are JSON text frames' };
  }
  const method = typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
  const session = sessionNamed(message);
  switch (method) {
    case 'subscribe': {
      const parsed = subscribeMessageSchema.safeParse(message);
      if (!parsed.success) {
        return { error: 'INVALID_MESSAGE', method, ...session, message: `subscribe needs params.session matching ${SESSION_ID.source}, an optional whole since and an optional epoch` };
      }
      const { session: s, since, epoch } = parsed.data.params;
      return subscribeRequest(s, since, epoch);
    }
    case 'unsubscribe': {
      const parsed = unsubscribeMessageSchema.safeParse(message);
      if (!parsed.success) return { error: 'INVALID_MESSAGE', method, ...session, message: 'unsubscribe needs params.session' };
      return { method, session: parsed.data.params.session };
    }
    case 'auth':
    case 'refresh': {
      const parsed = authMessageSchema.safeParse(message);
      if (!parsed.success) return { error: 'INVALID_MESSAGE', method, message: `${method} needs params.token` };
      return { method, token: parsed.data.params.token };
    }
    case 'watch_sessions': {
      const parsed = watchSessionsMessageSchema.safeParse(message);
      if (!parsed.success) return { error: 'INVALID_MESSAGE', method, message: 'watch_sessions takes an optional params.prefix of 1 to 128 characters' };
      const prefix = parsed.data.params?.prefix;
      return { method, ...(prefix === undefined ? {} : { prefix }) };
    }
    case 'unwatch_sessions': {
      const parsed = unwatchSessionsMessageSchema.safeParse(message);
      if (!parsed.success) return { error: 'INVALID_MESSAGE', method, message: 'unwatch_sessions takes no params' };
      return { method };
    }
    default:
      return { error: 'UNKNOWN_METHOD', message: `methods: ${METHODS}` };
  }
}

/**
 * The subscription the upgrade URL asks for (`?session=s1&since=40&epoch=e1`): undefined when it
 * names no session, an error when a part is malformed (the upgrade is then refused).
 */
export function parseQuery(query: { session?: unknown; since?: unknown; epoch?: unknown }): SubscribeRequest | RequestError | undefined {
  const { session, since, epoch } = query;
  if (session === undefined) {
    if (since !== undefined || epoch !== undefined) return { error: 'INVALID_MESSAGE', message: 'since and epoch need session' };
    return undefined;
  }
  if (typeof session !== 'string' || !SESSION_ID.test(session)) return { error: 'INVALID_MESSAGE', message: `session must match ${SESSION_ID.source}` };
  if (since !== undefined && (typeof since !== 'string' || !/^[0-9]{1,15}$/.test(since))) {
    return { error: 'INVALID_MESSAGE', session, message: 'since must be a whole number' };
  }
  if (epoch !== undefined && (typeof epoch !== 'string' || epoch.length === 0 || epoch.length > 256)) {
    return { error: 'INVALID_MESSAGE', session, message: 'epoch must be 1 to 256 characters' };
  }
  return subscribeRequest(session, since === undefined ? undefined : Number(since), epoch);
}

export function isRequestError(r: unknown): r is RequestError {
  return typeof r === 'object' && r !== null && 'error' in r;
}

function subscribeRequest(session: string, since: number | undefined, epoch: string | undefined): SubscribeRequest {
  return { method: 'subscribe', session, ...(since === undefined ? {} : { since }), ...(epoch === undefined ? {} : { epoch }) };
}

/** `{session}` of a message's params, when it names a valid one: error frames about it carry it. */
function sessionNamed(message: unknown): { session?: string } {
  const s = (message as { params?: { session?: unknown } } | null)?.params?.session;
  return typeof s === 'string' && SESSION_ID.test(s) ? { session: s } : {};
}

/** The protocol of one connection. */
export class StreamProtocol implements AuthExpiry {
  private readonly auth: StreamAuth;

  constructor(
    private readonly connection: Connection,
    private readonly authenticator: Authenticator,
    private readonly sessionWatch: SessionWatch,
    /** The principal the upgrade's token gave, or undefined when `auth` must come first. */
    principal: Principal | undefined,
    /** The upgrade URL's subscription, made once the connection is authenticated. */
    private deferred: SubscribeRequest | undefined,
    /** Told of every refused token or scope (horologium_auth_failures_total). */
    private readonly authFailed: (kind: AuthFailureKind) => void,
  ) {
    this.auth = new StreamAuth(this);
    this.auth.start(principal);
    if (principal && deferred) {
      this.deferred = undefined;
      this.submit(deferred);
    }
  }

  /** A text message from the client. */
  received(text: string): void {
    if (text === HEARTBEAT) return;
    this.submit(parseMessage(text));
  }

  dispose(): void {
    this.auth.dispose();
    this.sessionWatch.unwatch(this.connection);
  }

  private submit(request: StreamRequest | RequestError): void {
    this.connection.enqueue(() => this.handle(request));
  }

  private async handle(request: StreamRequest | RequestError): Promise<void> {
    const { connection, auth } = this;
    if (!auth.principal) {
      // Only a server with auth waits for a principal; before it, anything but auth closes the socket.
      if (isRequestError(request)) {
        return this.refuse('UNAUTHORIZED', request.method === 'auth' ? request.message : 'the first message must be auth', request.method === 'auth' ? 'malformed' : 'missing');
      }
      if (request.method !== 'auth') return this.refuse('UNAUTHORIZED', 'the first message must be auth', 'missing');
      const principal = await this.verified(request.token);
      if (principal instanceof Error) return this.refuse('UNAUTHORIZED', principal.message, principal.kind);
      if (!hasScope(principal, 'subscribe')) return this.refuse('FORBIDDEN', 'the token lacks the subscribe scope', 'forbidden');
      this.authenticated(principal);
      const deferred = this.deferred;
      this.deferred = undefined;
      if (deferred) await this.handle(deferred);
      return;
    }
    // Without auth configured, a token has nowhere to go: auth and refresh (well formed or not) say so.
    if ((request.method === 'auth' || request.method === 'refresh') && !this.authenticator.enabled) {
      return connection.sendError('AUTH_NOT_CONFIGURED', 'this server runs without auth; no token is needed');
    }
    if (isRequestError(request)) return connection.sendError(request.error, request.message, request.session);
    switch (request.method) {
      case 'subscribe':
        if (!coversSession(auth.principal, request.session)) {
          this.authFailed('forbidden');
          return connection.sendError('FORBIDDEN', `This token does not cover session ${request.session}.`, request.session);
        }
        return connection.subscribe(request.session, request.since, request.epoch);
      case 'unsubscribe':
        return connection.unsubscribe(request.session);
      case 'refresh':
        return this.refresh(request.token);
      case 'watch_sessions': {
        const { auth } = this;
        await this.sessionWatch.watch(connection, {
          ...(request.prefix === undefined ? {} : { prefix: request.prefix }),
          covers: (session) => auth.principal !== undefined && coversSession(auth.principal, session),
        });
        return;
      }
      case 'unwatch_sessions':
        this.sessionWatch.unwatch(connection);
        return;
      case 'auth':
        return connection.sendError('INVALID_MESSAGE', 'this socket is already authenticated; use refresh for a new token');
    }
  }

  private async refresh(token: string): Promise<void> {
    const { connection, auth } = this;
    const principal = await this.verified(token);
    if (principal instanceof Error) {
      this.authFailed(principal.kind);
      return connection.sendError('UNAUTHORIZED', `refresh refused: ${principal.message}; the current token stays until it expires`);
    }
    if (!hasScope(principal, 'subscribe')) {
      this.authFailed('forbidden');
      return connection.sendError('FORBIDDEN', 'refresh refused: the new token lacks the subscribe scope');
    }
    this.authenticated(principal);
    // A narrower token ends the subscriptions it no longer covers.
    for (const session of connection.sessions()) {
      if (coversSession(principal, session)) continue;
      connection.sendError('FORBIDDEN', `the new token does not cover session ${session}`, session);
      connection.unsubscribe(session);
    }
    connection.send('refreshed', refreshedFrame(principal.expiresAt === undefined ? null : Math.floor(principal.expiresAt / 1000)));
  }

  private authenticated(principal: Principal): void {
    this.auth.set(principal);
    this.connection.telemetry.authenticated(principal.id);
  }

  /** The token ran out, or no `auth` came in time (StreamAuth). */
  authExpired(reason: string, kind: AuthFailureKind): void {
    this.refuse('UNAUTHORIZED', reason, kind);
  }

  /** Closes the connection for a refused token (4001) or scope (4003), and counts it. */
  private refuse(name: 'UNAUTHORIZED' | 'FORBIDDEN', reason: string, kind: AuthFailureKind): void {
    this.authFailed(kind);
    this.connection.close(name, reason);
  }

  /** The principal of a token, or the error that says why there is none. */
  private async verified(token: string): Promise<Principal | AuthError> {
    try {
      return await this.authenticator.verify(token);
    } catch (err) {
      if (err instanceof AuthError) return err;
      throw err;
    }
  }
}
