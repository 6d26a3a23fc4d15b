/**
 * The one catalog of error codes (CONTRACT.md section 4). A code names one kind of failure, keeps
 * its HTTP status forever and is never reused for something else.
 */
export const ERRORS = {
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
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
  UNAUTHORIZED: { status: 401, message: 'A valid token is required.' },
  FORBIDDEN: { status: 403, message: 'The token does not allow this.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time.' },
  NOT_FOUND: { status: 404, message: 'There is no such endpoint.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This endpoint does not accept that method.' },
  CALL_ID_CONFLICT: {
    status: 409,
    message: 'This call_id was already used in this session with a different name, args or result.',
  },
  ACK_BEYOND_HEAD: { status: 409, message: 'Cannot acknowledge beyond the head of the queue.' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is larger than the configured limit.' },
  EVENT_TOO_LARGE: { status: 413, message: 'The event data is larger than the configured limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be application/json.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are larger than the server accepts.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry after the given number of seconds.' },
  TOO_MANY_CONNECTIONS: { status: 429, message: 'Too many open stream connections from this address.' },
  INTERNAL: { status: 500, message: 'Something went wrong on our side; it has been logged.' },
  STORE_UNAVAILABLE: { status: 503, message: 'The store is unreachable; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorDetail {
  path?: string;
  message: string;
}

/** An error the client can act on; the error handler turns it into the section 4 envelope. */
export class HorologiumError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string = ERRORS[code].message,
    readonly details: ErrorDetail[] = [],
    /** Extra reply headers, such as `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERRORS[code].status;
  }
}

/** The section 4 envelope. */
export function errorBody(code: string, message: string, details: ErrorDetail[] = []): string {
  return JSON.stringify({ error: { code, message, details } });
}
