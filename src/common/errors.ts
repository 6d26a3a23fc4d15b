/**
 * The one catalog of every code the service sends (docs/protocol.md, "Errors" and "Close codes"):
 * HTTP error codes with their status, the codes of stream error frames, and WebSocket close codes
 * with the rule a client follows after each. A code names one kind of failure, keeps its status
 * forever and is never reused for something else. Nothing here imports anything: the stream client
 * (also in browsers) reads the close rules from this file.
 */

interface ErrorEntry {
  /** The HTTP status of a reply with this code; absent for codes only error frames carry. */
  status?: number;
  /** True when a stream error frame may carry this code. */
  frame?: true;
  message: string;
}

export const ERRORS = {
  INVALID_JSON: { status: 400, frame: true, message: 'The request body is not valid JSON.' },
  NESTING_TOO_DEEP: { status: 400, message: 'The request body is nested too deeply.' },
  INVALID_BODY: { status: 400, message: 'The request body does not match what this endpoint accepts.' },
  INVALID_SESSION_ID: {
    status: 400,
    message: 'The session id must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$.',
  },
  INVALID_QUERY: { status: 400, message: 'A query parameter is invalid.' },
  RESERVED_EVENT_TYPE: {
    status: 400,
    message: 'tool_starting and tool_completed are published through tool-calls and tool-results.',
  },
  BAD_REQUEST: { status: 400, message: 'The request is malformed.' },
  UNAUTHORIZED: { status: 401, frame: true, message: 'A valid token is required.' },
  FORBIDDEN: { status: 403, frame: true, message: 'The token does not allow this.' },
  NOT_FOUND: { status: 404, message: 'There is no such endpoint.' },
  SESSION_NOT_FOUND: { status: 404, message: 'There is no such session.' },
  RESULT_NOT_FOUND: { status: 404, message: 'There is no stored result for this call_id.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This endpoint does not accept that method.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time.' },
  CALL_ID_CONFLICT: {
    status: 409,
    message: 'This call_id was already used in this session with a different name, args or result.',
  },
  EVENT_ID_CONFLICT: {
    status: 409,
    message: 'This event_id was already used in this session with a different type or data.',
  },
  ACK_BEYOND_HEAD: { status: 409, message: 'Cannot acknowledge beyond the head of the queue.' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is larger than the configured limit.' },
  EVENT_TOO_LARGE: { status: 413, message: 'The event data is larger than the configured limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be application/json.' },
  UPGRADE_REQUIRED: { status: 426, message: 'This endpoint is a WebSocket: the request must ask for an upgrade.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are larger than the server accepts.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry after the given number of seconds.' },
  TOO_MANY_CONNECTIONS: { status: 429, message: 'Too many open stream connections from this address.' },
  INTERNAL: { status: 500, frame: true, message: 'Something went wrong on our side; it has been logged.' },
  STORE_UNAVAILABLE: { status: 503, frame: true, message: 'The store is unreachable; retry later.' },
  // Sent by the load balancer of deploy/nginx.conf, never by the server itself.
  UPSTREAM_UNAVAILABLE: { status: 502, message: 'No Horologium instance answered; retry shortly.' },
  SHUTTING_DOWN: { status: 503, message: 'The server is shutting down; retry, on another instance if there is one.' },
  // Codes of stream error frames only.
  INVALID_MESSAGE: { frame: true, message: 'The message does not match what its method accepts.' },
  UNKNOWN_METHOD: { frame: true, message: 'There is no such method.' },
  AUTH_NOT_CONFIGURED: { frame: true, message: 'This server runs without auth; no token is needed.' },
  TOO_MANY_SUBSCRIPTIONS: { frame: true, message: 'This connection has as many subscriptions as it may.' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;
/** The codes an HTTP reply may carry. */
export type HttpErrorCode = { [K in ErrorCode]: (typeof ERRORS)[K] extends { status: number } ? K : never }[ErrorCode];
/** The codes a stream error frame may carry. */
export type FrameErrorCode = { [K in ErrorCode]: (typeof ERRORS)[K] extends { frame: true } ? K : never }[ErrorCode];

/**
 * What a client does after a close code:
 * - `resume`: reconnect with backoff (to another instance if it has several URLs) and resume each
 *   session from its last seq and epoch;
 * - `new-token`: reconnect only with a token other than the refused one (a token function asked
 *   again); the same token would be refused again;
 * - `never`: the client sent something it must not; reconnecting would repeat it.
 */
export type ReconnectRule = 'resume' | 'new-token' | 'never';

interface CloseEntry {
  code: number;
  reconnect: ReconnectRule;
  meaning: string;
}

export const CLOSE_CODES = {
  NORMAL: { code: 1000, reconnect: 'never', meaning: 'closed by the client' },
  GOING_AWAY: {
    code: 1001,
    reconnect: 'resume',
    meaning: 'the server is shutting down, or could not deliver events in order; reconnect (elsewhere) and resume',
  },
  UNSUPPORTED_DATA: { code: 1003, reconnect: 'never', meaning: 'a binary frame was sent; client messages are text' },
  MESSAGE_TOO_BIG: { code: 1009, reconnect: 'never', meaning: 'a client message was larger than 64 KiB' },
  UNAUTHORIZED: { code: 4001, reconnect: 'new-token', meaning: 'no token, a bad token, or an expired one' },
  FORBIDDEN: { code: 4003, reconnect: 'new-token', meaning: 'the token is valid but lacks the subscribe scope' },
  SLOW_CONSUMER: {
    code: 4008,
    reconnect: 'resume',
    meaning: 'the client stopped reading and more than the buffer limit was waiting; resume from the last seq',
  },
} as const satisfies Record<string, CloseEntry>;

export type CloseName = keyof typeof CLOSE_CODES;

/** The rule for a close code the client received; codes not in the catalog (1006, …) resume. */
export function reconnectRule(code: number): ReconnectRule {
  for (const entry of Object.values(CLOSE_CODES)) if (entry.code === code) return entry.reconnect;
  return 'resume';
}

export interface ErrorDetail {
  path?: string;
  message: string;
}

/** An error the client can act on; the error handler turns it into the HTTP error envelope. */
export class HorologiumError extends Error {
  readonly status: number;

  constructor(
    readonly code: HttpErrorCode,
    message: string = ERRORS[code].message,
    readonly details: ErrorDetail[] = [],
    /** Extra reply headers, such as `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERRORS[code].status;
  }
}

/** The HTTP error envelope. */
export function errorBody(code: HttpErrorCode, message: string, details: ErrorDetail[] = []): string {
  return JSON.stringify({ error: { code, message, details } });
}
