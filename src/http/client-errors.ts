/**
 * Errors Node's HTTP parser raises before Fastify sees a request (malformed request lines, headers
 * over the size limit, a request that did not arrive in time): answered with the section 4
 * envelope, like everything else, then the socket is closed.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ERRORS, errorBody, type ErrorCode } from '../common/errors.js';

const PHRASES: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST';
  const { status, message } = ERRORS[code];
  const body = errorBody(code, message);
  this.log.debug({ code: err.code }, 'client error');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${PHRASES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
