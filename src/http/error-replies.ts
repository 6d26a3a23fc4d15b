/**
 * Every error reply is the catalog's envelope (src/common/errors.ts) with the status it names: our own
 * errors, the store being away (503 with Retry-After), Fastify's own 4xx mapped onto the catalog,
 * 404 and 405 for requests no route takes, and 500 (logged) for anything else.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { errorBody, HorologiumError } from '../common/errors.js';
import { StoreUnavailableError } from '../store/types.js';

/** Fastify's own 4xx errors, mapped onto the catalog. */
const FASTIFY_CODES: Record<string, HorologiumError['code']> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

/** 16777216 → "16 MiB": how a limit is said to a person. */
function sizeInWords(bytes: number): string {
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** The catalog entry's envelope, with the status it names unless overridden. */
function sendError(reply: FastifyReply, e: HorologiumError, status = e.status) {
  // The request line names the code of every error reply.
  if (reply.request.logContext) reply.request.logContext.error = e.code;
  return reply.code(status).headers(e.headers).type('application/json; charset=utf-8').send(errorBody(e.code, e.message, e.details));
}

export function registerErrorReplies(app: FastifyInstance, bodyLimit: number, noRoute: (url: string) => HorologiumError): void {
  app.setErrorHandler((error: FastifyError | HorologiumError, request, reply) => {
    if (error instanceof HorologiumError) return sendError(reply, error);
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error.message }, 'store unavailable');
      return sendError(reply, new HorologiumError('STORE_UNAVAILABLE', undefined, [], { 'retry-after': '1' }));
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped === 'BODY_TOO_LARGE') {
      return sendError(reply, new HorologiumError(mapped, `The request body is larger than the limit of ${bodyLimit} bytes (${sizeInWords(bodyLimit)}, HOROLOGIUM_BODY_LIMIT).`));
    }
    if (mapped) return sendError(reply, new HorologiumError(mapped));
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) return sendError(reply, new HorologiumError('BAD_REQUEST'), status);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new HorologiumError('INTERNAL'));
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, noRoute(request.url)));
}
