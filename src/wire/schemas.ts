/**
 * The zod sources of every request body, query, reply and frame of docs/protocol.md sections 4 and 5.
 * Routes validate with them; scripts/write-schemas.ts turns them into schemas/*.json and the
 * OpenAPI document, and a test fails when the committed files drift from them.
 */
import { z } from 'zod';
import { wholeNumberPattern } from './number-pattern.js';
import { SESSION_STATES } from './sessions.js';

export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const NO_CONTROL = /^\P{Cc}*$/u;
const codePoints = (s: string) => [...s].length;

/*
 * Messages for people: every failure of a field (wrong type, too long, …) says the field's one rule,
 * as a sentence naming the field (json-body.ts adds "is required" when it is missing). Lengths
 * count characters (code points), as JSON Schema's minLength and maxLength do; where zod's own
 * checks count otherwise, the limits are refinements and are published to the JSON Schemas through
 * `meta`, so that the schemas carry the same limits as the server (test/wire/schema-boundaries.test.ts).
 */

/** A string of `min` to `max` characters (code points), `rule` on any failure. */
const text = (min: number, max: number, rule: string) =>
  z
    .string({ error: rule })
    .refine((s) => codePoints(s) >= min && codePoints(s) <= max, { error: rule })
    .meta({ minLength: min, maxLength: max });

export const sessionId = z.string().regex(SESSION_ID).meta({ description: 'A session id.' });

const CALL_ID_RULE = 'call_id must be 1 to 256 characters without control characters';
export const callId = text(1, 256, CALL_ID_RULE)
  .refine((s) => NO_CONTROL.test(s), { error: CALL_ID_RULE })
  .meta({ pattern: NO_CONTROL.source, description: "The producer's call id, unique per session: the idempotency key." });

const EVENT_ID_RULE = 'event_id must be 1 to 256 characters without control characters';
export const eventId = text(1, 256, EVENT_ID_RULE)
  .refine((s) => NO_CONTROL.test(s), { error: EVENT_ID_RULE })
  .meta({
    pattern: NO_CONTROL.source,
    description: 'Optional idempotency key of the event, unique per session: a retry with the same event_id, type and data is stored once.',
  });

export const toolName = text(1, 256, 'name must be 1 to 256 characters').meta({ description: 'The tool name.' });

/** Any JSON value; stored and returned byte for byte. */
export const jsonValue = z.unknown().meta({ description: 'Any JSON value, kept byte for byte as sent.' });

export const toolCallBodySchema = z
  .object({ call_id: callId, name: toolName, args: jsonValue.optional() })
  .meta({ title: 'ToolCallBody', description: 'POST /v1/sessions/{session}/tool-calls' });

export const toolResultBodySchema = z
  .object({
    call_id: callId,
    name: toolName,
    result: jsonValue,
    args: jsonValue.optional(),
    execution_time: z
      .number({ error: 'execution_time must be a number of seconds, 0 or more, or null' })
      .nonnegative({ error: 'execution_time must be a number of seconds, 0 or more, or null' })
      .nullable()
      .optional()
      .meta({ description: 'Seconds.' }),
    is_error: z.boolean({ error: 'is_error must be true or false' }).optional(),
  })
  .meta({ title: 'ToolResultBody', description: 'POST /v1/sessions/{session}/tool-results' });

export const RESERVED_EVENT_TYPES: ReadonlySet<string> = new Set(['tool_starting', 'tool_completed']);

const EVENT_TYPE_RULE = 'type must be 1 to 64 lowercase letters, digits or underscores, starting with a letter';

export const eventBodySchema = z
  .object({
    type: z
      .string({ error: EVENT_TYPE_RULE })
      .regex(/^[a-z][a-z0-9_]{0,63}$/, { error: EVENT_TYPE_RULE })
      // Refused by the route (400 RESERVED_EVENT_TYPE); published so that the schema refuses them too.
      .meta({ not: { enum: [...RESERVED_EVENT_TYPES] } }),
    data: z.record(z.string(), jsonValue, { error: 'data must be a JSON object' }),
    event_id: eventId.optional(),
  })
  .meta({ title: 'EventBody', description: 'POST /v1/sessions/{session}/events' });

const THROUGH_RULE = `through must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`;

export const ackBodySchema = z
  .object({
    through: z
      .number({ error: THROUGH_RULE })
      .int({ error: THROUGH_RULE })
      .nonnegative({ error: THROUGH_RULE })
      .max(Number.MAX_SAFE_INTEGER, { error: THROUGH_RULE }),
  })
  .meta({ title: 'AckBody', description: 'POST /v1/sessions/{session}/queue/ack' });

/** A query parameter holding a whole number from `min` to `max`: its digits, nothing else. */
const wholeNumber = (name: string, min: 0 | 1, max: number) =>
  z
    .string({ error: `${name} must be a whole number from ${min} to ${max}` })
    .regex(wholeNumberPattern(min, max), { error: `${name} must be a whole number from ${min} to ${max}` })
    .transform(Number);

const MAX_SEQ = Number.MAX_SAFE_INTEGER;
const WAIT_RULE = 'wait must be a number of seconds from 0 to 60 (at most 6 decimals)';

export const queueQuerySchema = z
  .object({
    after: wholeNumber('after', 0, MAX_SEQ).optional(),
    limit: wholeNumber('limit', 1, 1000).default(100),
    wait: z
      .string({ error: WAIT_RULE })
      .regex(/^(?:[0-5]?[0-9](?:\.[0-9]{1,6})?|60(?:\.0{1,6})?)$/, { error: WAIT_RULE })
      .transform(Number)
      .default(0),
  })
  .meta({ title: 'QueueQuery' });

export const eventsQuerySchema = z
  .object({
    after: wholeNumber('after', 0, MAX_SEQ).default(0),
    limit: wholeNumber('limit', 1, 1000).default(100),
  })
  .meta({ title: 'EventsQuery' });

export const sessionsQuerySchema = z
  .object({
    limit: wholeNumber('limit', 1, 500).default(50),
    cursor: text(1, 1024, 'cursor must be 1 to 1024 characters (the next_cursor of the page before)').optional(),
    prefix: text(1, 128, 'prefix must be 1 to 128 characters').optional(),
    state: z.enum(SESSION_STATES, { error: 'state must be running (open calls), failed (errors) or idle (neither)' }).optional(),
  })
  .meta({ title: 'SessionsQuery' });

/** Where an SSE stream starts, when no Last-Event-ID says it (docs/protocol.md section 10). */
export const sseQuerySchema = z
  .object({
    since: wholeNumber('since', 0, MAX_SEQ).optional(),
    epoch: text(1, 256, 'epoch must be 1 to 256 characters').optional(),
    token: z.string().optional(),
  })
  .meta({ title: 'SseQuery' });

/** The AG-UI stream's query: section 10's, and `snapshot=1` for the compact catch-up (section 11). */
export const agUiQuerySchema = sseQuerySchema
  .extend({
    snapshot: z.enum(['0', '1'], { error: 'snapshot must be 0 or 1' }).optional(),
  })
  .meta({ title: 'AgUiQuery' });

// Replies and frames: not parsed at run time (they are built as text), but published as schemas.

const seq = z.number().int().min(0);

export const errorReplySchema = z
  .object({
    error: z.object({
      code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
      message: z.string(),
      details: z.array(z.object({ path: z.string().optional(), message: z.string() })),
    }),
  })
  .meta({ title: 'ErrorReply' });

export const eventSeqReplySchema = z.object({ event_seq: seq, duplicate: z.boolean().optional() }).meta({ title: 'EventSeqReply' });

export const toolResultReplySchema = z
  .object({ call_id: z.string(), queue_seq: seq, event_seq: seq, duplicate: z.boolean() })
  .meta({ title: 'ToolResultReply' });

/**
 * The data of the two tool events, described once (docs/protocol.md sections 4 and 12): the event
 * composer's output is checked against these (test/wire/event-data.test.ts), schemas/ publishes
 * them, and the SDK's ToolStartingData / ToolCompletedData are checked to be these types.
 */
export const toolStartingDataSchema = z
  .object({
    name: z.string(),
    call_id: z.string(),
    args: z.string().meta({ description: 'A one-line echo of the arguments, at most 120 characters ("" when the call sent none).' }),
    arguments: jsonValue.meta({ description: 'The arguments as sent, every string longer than the preview limit truncated; null when none were sent.' }),
  })
  .meta({ title: 'ToolStartingData' });

export const toolCompletedDataSchema = z
  .object({
    name: z.string(),
    call_id: z.string(),
    execution_time: z.number().nonnegative().nullable(),
    is_error: z.boolean(),
    result: z
      .union([z.string(), z.record(z.string(), jsonValue)])
      .meta({ description: 'The preview: a pass-through object as sent, otherwise text of at most the preview limit.' }),
    arguments: jsonValue,
    result_bytes: z
      .number()
      .int()
      .min(1)
      .optional()
      .meta({ description: "v1.2: UTF-8 bytes of the full result's JSON text (the queue entry's message.content). Absent on events stored before v1.2." }),
    truncated: z
      .boolean()
      .optional()
      .meta({ description: 'v1.2: true exactly when truncation shortened the preview. Absent on events stored before v1.2 (a preview then may be cut).' }),
  })
  .meta({ title: 'ToolCompletedData' });

export const statusFrameSchema = z
  .object({
    method: z.literal('status'),
    result: z.object({
      type: z.string(),
      data: z.record(z.string(), jsonValue),
      timestamp: z.number(),
      uuid: z.string(),
      session: z.string(),
      seq,
    }),
  })
  .meta({ title: 'StatusFrame' });

export const queueEntrySchema = z
  .object({
    queue_seq: seq,
    call_id: z.string(),
    name: z.string(),
    args: jsonValue,
    result: jsonValue,
    execution_time: z.number().nullable(),
    is_error: z.boolean(),
    received_at: z.string(),
    message: z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
  })
  .meta({ title: 'QueueEntry' });

export const queueReplySchema = z
  .object({ session: z.string(), committed: seq, head: seq, oldest: seq, entries: z.array(queueEntrySchema) })
  .meta({ title: 'QueueReply' });

export const ackReplySchema = z.object({ committed: seq }).meta({ title: 'AckReply' });

export const eventsReplySchema = z
  .object({ session: z.string(), epoch: z.string(), head: seq, oldest: seq, events: z.array(statusFrameSchema) })
  .meta({ title: 'EventsReply' });

export const sessionSummarySchema = z
  .object({
    session: z.string(),
    epoch: z.string(),
    head: seq,
    oldest: seq,
    queue_head: seq,
    committed: seq,
    created_at: z.string().meta({ description: 'ISO 8601: the first write.' }),
    last_event_at: z.string().meta({ description: 'ISO 8601: the last event (the activity the list is ordered by).' }),
    open_calls: seq.meta({ description: 'v1.2: calls announced by tool-calls and not completed yet.' }),
    errors: seq.meta({ description: 'v1.2: completed calls with is_error true.' }),
  })
  .meta({ title: 'SessionSummary' });

export const sessionsReplySchema = z
  .object({ sessions: z.array(sessionSummarySchema), next: z.string().nullable() })
  .meta({ title: 'SessionsReply' });

export const sessionDeletedReplySchema = z
  .object({ session: z.string(), deleted: z.literal(true) })
  .meta({ title: 'SessionDeletedReply' });

export const subscribedFrameSchema = z
  .object({
    method: z.literal('subscribed'),
    result: z.object({ session: z.string(), epoch: z.string(), head: seq, oldest: seq, recovered: z.boolean() }),
  })
  .meta({ title: 'SubscribedFrame' });

export const unsubscribedFrameSchema = z
  .object({
    method: z.literal('unsubscribed'),
    result: z.object({
      session: z.string(),
      reason: z.enum(['deleted', 'forbidden', 'reset']).optional().meta({ description: 'Absent when the client asked.' }),
    }),
  })
  .meta({ title: 'UnsubscribedFrame' });

export const errorFrameSchema = z
  .object({ method: z.literal('error'), result: z.object({ code: z.string(), message: z.string(), session: z.string().optional() }) })
  .meta({ title: 'ErrorFrame' });

export const refreshedFrameSchema = z
  .object({
    method: z.literal('refreshed'),
    // Seconds since the epoch; null for a static token, which does not expire.
    result: z.object({ exp: z.number().nullable() }),
  })
  .meta({ title: 'RefreshedFrame' });

export const subscribeMessageSchema = z
  .object({
    method: z.literal('subscribe'),
    params: z.object({
      session: sessionId,
      since: z.number().int().min(0).optional(),
      epoch: z.string().optional(),
    }),
  })
  .meta({ title: 'SubscribeMessage' });

export const unsubscribeMessageSchema = z
  .object({ method: z.literal('unsubscribe'), params: z.object({ session: sessionId }) })
  .meta({ title: 'UnsubscribeMessage' });

export const watchSessionsMessageSchema = z
  .object({
    method: z.literal('watch_sessions'),
    params: z.object({ prefix: z.string().min(1).max(128).optional() }).optional(),
  })
  .meta({ title: 'WatchSessionsMessage' });

export const unwatchSessionsMessageSchema = z
  .object({ method: z.literal('unwatch_sessions'), params: z.object({}).optional() })
  .meta({ title: 'UnwatchSessionsMessage' });

export const sessionFrameSchema = z
  .object({
    method: z.literal('session'),
    result: z.union([sessionSummarySchema, z.object({ session: z.string(), deleted: z.literal(true) })]),
  })
  .meta({ title: 'SessionFrame' });

export const authMessageSchema = z
  .object({ method: z.enum(['auth', 'refresh']), params: z.object({ token: z.string().min(1) }) })
  .meta({ title: 'AuthMessage' });

/** Every schema published in schemas/, by file name. */
export const PUBLISHED = {
  'tool-call-body': toolCallBodySchema,
  'tool-result-body': toolResultBodySchema,
  'event-body': eventBodySchema,
  'ack-body': ackBodySchema,
  'queue-query': queueQuerySchema,
  'events-query': eventsQuerySchema,
  'sessions-query': sessionsQuerySchema,
  'sse-query': sseQuerySchema,
  'ag-ui-query': agUiQuerySchema,
  'session-summary': sessionSummarySchema,
  'sessions-reply': sessionsReplySchema,
  'session-deleted-reply': sessionDeletedReplySchema,
  'error-reply': errorReplySchema,
  'event-seq-reply': eventSeqReplySchema,
  'tool-result-reply': toolResultReplySchema,
  'queue-reply': queueReplySchema,
  'ack-reply': ackReplySchema,
  'events-reply': eventsReplySchema,
  'status-frame': statusFrameSchema,
  'tool-starting-data': toolStartingDataSchema,
  'tool-completed-data': toolCompletedDataSchema,
  'subscribed-frame': subscribedFrameSchema,
  'unsubscribed-frame': unsubscribedFrameSchema,
  'error-frame': errorFrameSchema,
  'refreshed-frame': refreshedFrameSchema,
  'subscribe-message': subscribeMessageSchema,
  'unsubscribe-message': unsubscribeMessageSchema,
  'auth-message': authMessageSchema,
  'watch-sessions-message': watchSessionsMessageSchema,
  'unwatch-sessions-message': unwatchSessionsMessageSchema,
  'session-frame': sessionFrameSchema,
} as const;
