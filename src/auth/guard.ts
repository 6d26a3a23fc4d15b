/**
 * The HTTP side of auth (docs/protocol.md section 7): every route names the scope it needs in its
 * config, and one onRequest hook (before any body is read) checks the bearer token, the scope and
 * the `:session` param. No token, or a malformed, invalid or expired one: 401. A valid token
 * without the scope or the session: 403. Routes without a scope (/healthz, /readyz) are public.
 *
 * The stream route is marked `stream`: there the token may also come as `?token=`, and a missing
 * token is not refused at the upgrade, because the client may send it as its first message.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HorologiumError } from '../common/errors.js';
import type { StreamKind } from '../wire/stream-kinds.js';
import { AuthError, bearerToken, type AuthFailureKind, type Authenticator } from './authenticator.js';
import { coversSession, hasScope, OPEN_PRINCIPAL, type Principal } from './principal.js';
import { missingScopeMessage, type Scope } from './scopes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a request needs; `any` is any valid token; absent means public. */
    scope?: Scope | 'any';
    /** The WebSocket stream: the token may come in `?token=`, or later as the `auth` message. */
    stream?: boolean;
    /** The token may come in `?token=` (the SSE streams); it is never logged. */
    tokenInQuery?: boolean;
    /** The route opens this stream: its refusals and auth failures are counted as that stream's. */
    streamKind?: StreamKind;
  }
  interface FastifyRequest {
    /** Set by the guard on every route that names a scope (absent on a stream awaiting `auth`). */
    principal?: Principal;
  }
}

export function unauthorized(reason: string): HorologiumError {
  const sentence = `${reason.charAt(0).toUpperCase()}${reason.slice(1)}${reason.endsWith('.') ? '' : '.'}`;
  return new HorologiumError('UNAUTHORIZED', sentence, [], { 'www-authenticate': 'Bearer' });
}

/** The scope and session check both routes and stream messages use; throws 403. */
export function authorize(principal: Principal, scope: Scope | 'any', session: string | undefined): void {
  if (scope !== 'any' && !hasScope(principal, scope)) throw new HorologiumError('FORBIDDEN', missingScopeMessage(scope, principal.claimed));
  if (session !== undefined && !coversSession(principal, session)) {
    throw new HorologiumError('FORBIDDEN', 'This token does not cover this session.');
  }
}

/** Where a request was refused: an HTTP endpoint, or the opening of one of the streams. */
export type AuthSurface = 'http' | StreamKind;

/** Told of every refusal, for `horologium_auth_failures_total`. */
export type AuthFailureListener = (surface: AuthSurface, kind: AuthFailureKind) => void;

/** authorize(), with a refusal told to `failed` as a `forbidden` on `surface`. */
export function authorizeCounted(principal: Principal, scope: Scope | 'any', session: string | undefined, surface: AuthSurface, failed: AuthFailureListener): void {
  try {
    authorize(principal, scope, session);
  } catch (err) {
    failed(surface, 'forbidden');
    throw err;
  }
}

export function registerAuthGuard(app: FastifyInstance, authenticator: Authenticator, failed: AuthFailureListener): void {
  app.decorateRequest('principal', undefined);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const { scope, stream, tokenInQuery, streamKind } = request.routeOptions.config;
    if (scope === undefined) return;
    if (!authenticator.enabled) {
      request.principal = OPEN_PRINCIPAL;
      return;
    }
    let principal: Principal;
    try {
      let token = bearerToken(request.headers.authorization);
      // Streams may carry the token in the URL (EventSource and browsers' WebSocket cannot set headers).
      if (token === undefined && (stream || tokenInQuery)) token = (request.query as { token?: string }).token;
      if (token === undefined) {
        if (stream) return;
        throw new AuthError('missing', 'A bearer token is required (Authorization: Bearer <token>).');
      }
      principal = await authenticator.verify(token);
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      failed(streamKind ?? 'http', err.kind);
      throw unauthorized(err.message);
    }
    authorizeCounted(principal, scope, (request.params as { session?: string }).session, streamKind ?? 'http', failed);
    request.principal = principal;
  });
}
