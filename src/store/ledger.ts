/**
 * The write rules every local backend shares: seq assignment, idempotency by call_id, retention,
 * and the shape of events and queue entries. A backend supplies a `LedgerTx` (its reads and writes
 * inside one transaction) and gets the contract's semantics; keeping them here means memory and
 * sqlite cannot drift apart.
 */
import { randomUUID } from 'node:crypto';
import { composeEvent, composeToolCompleted, composeToolStarting, frameOf, type ComposedEvent, type EventStamp } from '../wire/event-composer.js';
import type {
  AckOutcome,
  Applied,
  WriteOp,
  CallTiming,
  CompleteCallInput,
  CompleteCallOutcome,
  EventKey,
  EventRecord,
  KeyedEventOutcome,
  OpenCall,
  QueueEntry,
  StartCallInput,
  StartCallOutcome,
  StartedCall,
  StoredQueueEntry,
  SweepPolicy,
  SweepResult,
} from './types.js';

export interface SessionHeads {
  eventHead: number;
  queueHead: number;
  committed: number;
  /** The incarnation's epoch; '' for a session that does not exist. */
  epoch: string;
  /** ms since the epoch of the first write and of the last event; 0 for a session that does not exist. */
  createdAt: number;
  lastEventAt: number;
  /** Calls started (tool-calls) and not completed yet; completed calls with is_error (v1.2). */
  openCalls: number;
  errors: number;
}

export const EMPTY_HEADS: SessionHeads = Object.freeze({ eventHead: 0, queueHead: 0, committed: 0, epoch: '', createdAt: 0, lastEventAt: 0, openCalls: 0, errors: 0 });

/**
 * The epoch of a session's next incarnation: the store's own epoch (a file's, a process's), and
 * after the session's n-th deletion that epoch with `.n`. A session read before its first write
 * is told the epoch that write will give it, without anything being stored.
 */
export function incarnationEpoch(storeEpoch: string, deletions: number): string {
  return deletions === 0 ? storeEpoch : `${storeEpoch}.${deletions}`;
}

export interface CallRecord {
  started?: StartedCall & { fingerprint: string; eventSeq: number };
  completed?: { fingerprint: string; queueSeq: number; eventSeq: number };
}

/** One backend's reads and writes within one transaction. */
export interface LedgerTx {
  heads(session: string): SessionHeads;
  /** The epoch a session that does not exist would get at its first write. */
  nextEpoch(session: string): string;
  setHeads(session: string, heads: SessionHeads): void;
  call(session: string, callId: string): CallRecord | undefined;
  putCall(session: string, callId: string, record: CallRecord): void;
  insertEvent(event: EventRecord): void;
  /** Deletes the session's events with seq < `keepFrom`. */
  trimEvents(session: string, keepFrom: number): void;
  insertQueueEntry(session: string, entry: QueueEntry): void;
  /**
   * Removes the session's heads, events, queue and call records, and counts the deletion; answers
   * the calls it still had open (openCallsOf), or undefined when it did not exist.
   */
  removeSession(session: string): OpenCall[] | undefined;
  /** One slice of retention (SweepPolicy); deletions go through removeSession. */
  sweepSlice(policy: SweepPolicy): SweepResult;
}

/** Seconds since the epoch, as the contract's `timestamp` is. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now() / 1000;

export class Ledger {
  constructor(
    private readonly historySize: number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Applies one write; what it did is stated by its kind. */
  apply(tx: LedgerTx, op: WriteOp): Applied {
    const session = op.session;
    switch (op.kind) {
      case 'start':
        return { kind: op.kind, session, value: this.startCall(tx, session, op.input) };
      case 'complete':
        return { kind: op.kind, session, value: this.completeCall(tx, session, op.input) };
      case 'event':
        return { kind: op.kind, session, value: this.appendEvent(tx, session, op.type, op.dataJson) };
      case 'keyedEvent':
        return { kind: op.kind, session, value: this.appendKeyedEvent(tx, session, op.type, op.dataJson, op.key) };
      case 'ack':
        return { kind: op.kind, session, value: ack(tx, session, op.through) };
      case 'delete':
        return { kind: op.kind, session, value: tx.removeSession(session) };
      case 'sweep':
        return { kind: op.kind, session, value: tx.sweepSlice(op.policy) };
    }
  }

  startCall(tx: LedgerTx, session: string, input: StartCallInput): StartCallOutcome {
    const repeat = startRepeat(tx.call(session, input.callId), input);
    if (repeat) return repeat;
    const now = this.clock();
    const heads = tx.heads(session);
    const event = this.event(tx, session, heads, composeToolStarting(input, stampOf(session, now)));
    const started = active(tx, session, heads, event.seq, now);
    tx.setHeads(session, { ...started, openCalls: started.openCalls + 1 });
    tx.putCall(session, input.callId, { started: { ...startedCall(input, now), eventSeq: event.seq } });
    return { status: 'created', eventSeq: event.seq, event };
  }

  completeCall(tx: LedgerTx, session: string, input: CompleteCallInput): CompleteCallOutcome {
    const record = tx.call(session, input.callId) ?? {};
    const now = this.clock();
    // Everything that can throw comes before the first write, so a failure stores nothing.
    const decided = completion(record, input, stampOf(session, now));
    if ('repeat' in decided) return decided.repeat;
    const { composed, entry, timing } = decided;
    const heads = tx.heads(session);
    const queueSeq = heads.queueHead + 1;
    tx.insertQueueEntry(session, { queueSeq, ...entry });
    const event = this.event(tx, session, heads, composed);
    const after = active(tx, session, heads, event.seq, now);
    tx.setHeads(session, {
      ...after,
      queueHead: queueSeq,
      // The call was open if it was started (a result without tool-calls never was).
      openCalls: record.started ? Math.max(0, after.openCalls - 1) : after.openCalls,
      errors: after.errors + (input.isError ? 1 : 0),
    });
    tx.putCall(session, input.callId, {
      ...record,
      completed: { fingerprint: input.fingerprint, queueSeq, eventSeq: event.seq },
    });
    return { status: 'created', queueSeq, eventSeq: event.seq, event, timing };
  }

  appendEvent(tx: LedgerTx, session: string, type: string, dataJson: string): EventRecord {
    const heads = tx.heads(session);
    const now = this.clock();
    const event = this.event(tx, session, heads, composeEvent(type, dataJson, stampOf(session, now)));
    tx.setHeads(session, active(tx, session, heads, event.seq, now));
    return event;
  }

  appendKeyedEvent(tx: LedgerTx, session: string, type: string, dataJson: string, key: EventKey): KeyedEventOutcome {
    const recordId = eventKeyRecord(key.id);
    const repeat = keyedEventRepeat(tx.call(session, recordId), key);
    if (repeat) return repeat;
    const event = this.appendEvent(tx, session, type, dataJson);
    tx.putCall(session, recordId, { completed: { fingerprint: key.fingerprint, queueSeq: 0, eventSeq: event.seq } });
    return { status: 'created', event };
  }

  /** Appends the session's next event and trims the history behind it. */
  private event(tx: LedgerTx, session: string, heads: SessionHeads, composed: ComposedEvent): EventRecord {
    const seq = heads.eventHead + 1;
    const event: EventRecord = { session, seq, type: composed.type, frame: frameOf(composed.head, seq) };
    tx.insertEvent(event);
    if (seq > this.historySize) tx.trimEvents(session, seq - this.historySize + 1);
    return event;
  }
}

/** The stamp of an event accepted at `now` (seconds). */
export function stampOf(session: string, now: number): EventStamp {
  return { session, timestamp: now, uuid: randomUUID() };
}

/** The heads after a write that appended event `seq` at `now` (seconds), creating the session if new. */
function active(tx: LedgerTx, session: string, heads: SessionHeads, seq: number, now: number): SessionHeads {
  const ms = Math.floor(now * 1000);
  return heads.createdAt === 0
    ? { ...heads, eventHead: seq, epoch: tx.nextEpoch(session), createdAt: ms, lastEventAt: ms }
    : { ...heads, eventHead: seq, lastEventAt: ms };
}


/**
 * Where an event_id is kept: among the session's call records, under the id with a control
 * character in front (a call_id has none, so the two can never meet), as a completed record whose
 * fingerprint is the event's and whose eventSeq is its seq. Deleted with the session, as call_ids are.
 */
export function eventKeyRecord(eventId: string): string {
  return `\u0001${eventId}`;
}

/** The reply to an event whose event_id already has a record; undefined when it has none. */
export function keyedEventRepeat(record: CallRecord | undefined, key: EventKey): KeyedEventOutcome | undefined {
  if (!record?.completed) return undefined;
  return record.completed.fingerprint === key.fingerprint
    ? { status: 'duplicate', eventSeq: record.completed.eventSeq }
    : { status: 'conflict', message: 'this event_id was already used with a different type or data' };
}

const ERRORS_CONFLICT = 'this call_id was already used with a different name, args or result';

// The rules below are pure, so that a backend that cannot run the Ledger inside its transaction
// (Redis runs Lua) applies exactly the same ones around its atomic step.

/** The reply to a tool-calls whose call_id already has a record; undefined when it has none. */
export function startRepeat(record: CallRecord | undefined, input: StartCallInput): StartCallOutcome | undefined {
  if (record?.started) {
    return record.started.fingerprint === input.fingerprint
      ? { status: 'duplicate', eventSeq: record.started.eventSeq }
      : { status: 'conflict', message: 'this call_id was already started with a different name or args' };
  }
  if (record?.completed) return { status: 'conflict', message: 'this call_id already has a result' };
  return undefined;
}

/**
 * What a tool-results writes, decided from the call's record: the reply to a repeat, or the
 * tool_completed event (but its seq) and the queue entry (but its queueSeq).
 */
export function completion(
  record: CallRecord,
  input: CompleteCallInput,
  stamp: EventStamp,
): { repeat: CompleteCallOutcome } | { composed: ComposedEvent; entry: Omit<QueueEntry, 'queueSeq'>; timing: CallTiming } {
  const repeat = completeRepeat(record, input);
  if (repeat) return { repeat };
  const started = record.started;
  const now = stamp.timestamp;
  const executionTimeJson = executionTimeOf(input, started, now);
  const composed = composeToolCompleted(input.completed, { executionTimeJson, startedArgumentsJson: started?.argumentsJson ?? null }, stamp);
  return { composed, entry: queueEntryOf(input, started, executionTimeJson, now), timing: timingOf(record.started, executionTimeJson, now) };
}

function timingOf(started: CallRecord['started'], executionTimeJson: string, now: number): CallTiming {
  const executionTime = executionTimeJson === 'null' ? null : Number(executionTimeJson);
  if (!started) return { started: null, completedAt: now, executionTime };
  const at = { at: started.startedAt, seq: started.eventSeq };
  return { started: started.traceContext ? { ...at, traceContext: started.traceContext } : at, completedAt: now, executionTime };
}

/** The reply to a tool-results whose call_id already has a result; undefined when it has none. */
function completeRepeat(record: CallRecord | undefined, input: CompleteCallInput): CompleteCallOutcome | undefined {
  if (!record?.completed) return undefined;
  return record.completed.fingerprint === input.fingerprint
    ? { status: 'duplicate', queueSeq: record.completed.queueSeq, eventSeq: record.completed.eventSeq }
    : { status: 'conflict', message: ERRORS_CONFLICT };
}

/** The calls of a session's records that were started and never completed (keyed-event records have no start). */
export function openCallsOf(session: string, records: Iterable<[string, CallRecord]>): OpenCall[] {
  const open: OpenCall[] = [];
  for (const [callId, { started, completed }] of records) {
    if (!started || completed) continue;
    const call: OpenCall = { session, callId, name: started.name, startedAt: started.startedAt, eventSeq: started.eventSeq };
    open.push(started.traceContext ? { ...call, traceContext: started.traceContext } : call);
  }
  return open;
}

/** What a started call keeps for its result (its eventSeq is added by the write). */
export function startedCall(input: StartCallInput, now: number): Omit<NonNullable<CallRecord['started']>, 'eventSeq'> {
  const kept = { name: input.name, argsJson: input.argsJson, argumentsJson: input.args.arguments, startedAt: now, fingerprint: input.fingerprint };
  return input.traceContext ? { ...kept, traceContext: input.traceContext } : kept;
}

/** The producer's execution time, else the time since tool_starting, else null (JSON text). */
function executionTimeOf(input: CompleteCallInput, started: StartedCall | undefined, now: number): string {
  return input.executionTimeJson ?? (started ? String(Math.max(0, roundMicros(now - started.startedAt))) : 'null');
}

/** The queue entry of a result, but its queueSeq. */
function queueEntryOf(input: CompleteCallInput, started: StartedCall | undefined, executionTimeJson: string, now: number): Omit<QueueEntry, 'queueSeq'> {
  return {
    callId: input.callId,
    name: input.name,
    argsJson: input.argsJson ?? started?.argsJson ?? null,
    resultJson: input.resultJson,
    executionTimeJson,
    isError: input.isError,
    receivedAt: new Date(now * 1000).toISOString(),
  };
}

/** An entry as read back, from the written form (the memory store keeps it; redis entries of before). */
export function storedEntry(entry: QueueEntry): StoredQueueEntry {
  const { resultJson, ...rest } = entry;
  return { ...rest, result: Buffer.from(resultJson) };
}

function roundMicros(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}

/** Moves the committed cursor forward (never back, never past the head); shared by every backend. */
export function ack(tx: LedgerTx, session: string, through: number): AckOutcome {
  const heads = tx.heads(session);
  if (through > heads.queueHead) return { status: 'beyond_head', head: heads.queueHead };
  const committed = Math.max(heads.committed, through);
  if (committed !== heads.committed) tx.setHeads(session, { ...heads, committed });
  return { status: 'ok', committed };
}
