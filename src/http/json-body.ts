/**
 * The JSON body parser of every POST route: bytes → safe-encoded text → lossless document. It
 * replaces Fastify's own parser, which would lose big integers and key order.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HorologiumError } from '../common/errors.js';
import { JsonNestingError, JsonSyntaxError, parseJson, type JsonDocument, type JsonObject } from '../json/lossless.js';
import { shallowView } from '../json/shallow.js';
import { decodeUtf8 } from '../json/utf8.js';

/** Bodies deeper than this are refused with 400 NESTING_TOO_DEEP (results of 10,000 levels pass). */
export const MAX_BODY_DEPTH = 16_384;

export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body: Buffer, done) => {
    try {
      done(null, parseJson(decodeUtf8(body), MAX_BODY_DEPTH));
    } catch (err) {
      if (err instanceof JsonNestingError) {
        done(new HorologiumError('NESTING_TOO_DEEP', `The request body is nested deeper than ${err.maxDepth} levels.`), undefined);
      } else if (err instanceof JsonSyntaxError) {
        done(new HorologiumError('INVALID_JSON', `The request body is not valid JSON: ${err.message}.`), undefined);
      } else {
        done(err as Error, undefined);
      }
    }
  });
}

export interface ObjectBody {
  doc: JsonDocument;
  object: JsonObject;
}

/** The request's body as a JSON object, or a 4xx saying why not. */
export function objectBody(request: FastifyRequest): ObjectBody {
  const doc = request.body as JsonDocument | undefined;
  if (doc === undefined || doc === null || typeof doc !== 'object' || !('root' in doc)) {
    throw request.headers['content-type'] === undefined
      ? new HorologiumError('UNSUPPORTED_MEDIA_TYPE', 'A JSON body with content-type application/json is required.')
      : new HorologiumError('INVALID_JSON', 'The request body is empty.');
  }
  if (doc.root.kind !== 'object') throw new HorologiumError('INVALID_BODY', 'The request body must be a JSON object.');
  return { doc, object: doc.root };
}

/** Validates `value` with `schema`, or throws `code` with one detail per zod issue. */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code: 'INVALID_BODY' | 'INVALID_QUERY' = 'INVALID_BODY',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return { path, message: humanMessage(issue, path, value) };
  });
  const first = details[0];
  // Each message names its field already.
  const summary = first ? first.message : 'invalid';
  throw new HorologiumError(code, `${code === 'INVALID_BODY' ? 'Invalid body' : 'Invalid query'}: ${summary}.`, details);
}

/**
 * What a person reads: the field's own rule (wire/schemas.ts), "is required" for a missing field,
 * and never zod's internal wording ("Invalid input: expected string, received undefined").
 */
function humanMessage(issue: z.core.$ZodIssue, path: string, value: unknown): string {
  const field = issue.path.length === 1 ? String(issue.path[0]) : undefined;
  if (field !== undefined && typeof value === 'object' && value !== null && !Object.hasOwn(value, field)) {
    return issue.message.startsWith(field) ? `${field} is required: ${issue.message.slice(field.length + 1)}` : `${field} is required`;
  }
  if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
  // A rule of ours starts with the field's name; anything else is said plainly.
  if (path !== '' && issue.message.startsWith(path.split('.').at(-1) as string)) return issue.message;
  return path === '' ? 'the value is not valid here' : `${path} is not valid`;
}

/** The body's envelope validated with `schema` (see shallow.ts for why only the envelope). */
export function validBody<S extends z.ZodType>(body: ObjectBody, schema: S): z.output<S> {
  return validate(schema, shallowView(body.doc, body.object));
}
