/**
 * The `memory:` backend: nothing is kept across a restart, so every start is a new epoch. Writes
 * apply synchronously, which makes each of them trivially atomic and ordered.
 */
import { randomUUID } from 'node:crypto';
import { ack, EMPTY_HEADS, incarnationEpoch, Ledger, openCallsOf, storedEntry, type CallRecord, type Clock, type LedgerTx, type SessionHeads } from './ledger.js';
import { Listeners, localFeed } from './listeners.js';
import { byActivity, decodeCursor, encodeCursor, isAfter } from './session-cursor.js';
import { inState } from '../wire/sessions.js';
import type {
  AckOutcome,
  CompleteCallInput,
  CompleteCallOutcome,
  OpenCall,
  EventPage,
  EventKey,
  EventRecord,
  KeyedEventOutcome,
  QueueEntry,
  QueuePage,
  StoredQueueEntry,
  SessionList,
  SessionListQuery,
  SessionSummary,
  StartCallInput,
  SweepPolicy,
  SweepResult,
  StartCallOutcome,
  Store,
  StoreListener,
  StoreOptions,
} from './types.js';

interface SessionState {
  heads: SessionHeads;
  calls: Map<string, CallRecord>;
  events: EventRecord[];
  queue: QueueEntry[];
}

export class MemoryStore implements Store, LedgerTx {
  readonly kind = 'memory';
  private readonly epoch = randomUUID();
  private readonly sessions = new Map<string, SessionState>();
  /** How often each session was deleted: its next incarnation's epoch. */
  private readonly deletions = new Map<string, number>();
  private readonly ledger: Ledger;
  private readonly listeners = new Listeners();

  constructor(options: StoreOptions, clock?: Clock) {
    this.ledger = new Ledger(options.historySize, clock);
  }

  async open(): Promise<void> {}
  async close(): Promise<void> {}
  async isReady(): Promise<boolean> {
    return true;
  }

  async startCall(session: string, input: StartCallInput): Promise<StartCallOutcome> {
    const value = this.ledger.startCall(this, session, input);
    this.listeners.announce([{ kind: 'start', session, value }]);
    return value;
  }

  async completeCall(session: string, input: CompleteCallInput): Promise<CompleteCallOutcome> {
    const value = this.ledger.completeCall(this, session, input);
    this.listeners.announce([{ kind: 'complete', session, value }]);
    return value;
  }

  async appendEvent(session: string, type: string, dataJson: string): Promise<EventRecord> {
    const value = this.ledger.appendEvent(this, session, type, dataJson);
    this.listeners.announce([{ kind: 'event', session, value }]);
    return value;
  }

  async appendKeyedEvent(session: string, type: string, dataJson: string, key: EventKey): Promise<KeyedEventOutcome> {
    const value = this.ledger.appendKeyedEvent(this, session, type, dataJson, key);
    this.listeners.announce([{ kind: 'keyedEvent', session, value }]);
    return value;
  }

  async readQueue(session: string, after: number | undefined, limit: number): Promise<QueuePage> {
    const state = this.sessions.get(session);
    const heads = state?.heads ?? EMPTY_HEADS;
    const from = after ?? heads.committed;
    // The queue holds consecutive queueSeqs from its first (retention removes only a prefix).
    const first = state?.queue[0]?.queueSeq ?? 1;
    const skip = Math.max(0, from + 1 - first);
    const entries = state ? state.queue.slice(skip, skip + limit).map(storedEntry) : [];
    return { session, committed: heads.committed, head: heads.queueHead, oldest: state?.queue[0]?.queueSeq ?? 0, entries };
  }

  async toolResult(session: string, callId: string): Promise<StoredQueueEntry | undefined> {
    const state = this.sessions.get(session);
    const queueSeq = state?.calls.get(callId)?.completed?.queueSeq;
    if (!state || !queueSeq) return undefined;
    // Consecutive queueSeqs from the first kept (retention removes only a prefix), as readQueue reads them.
    const entry = state.queue[queueSeq - (state.queue[0]?.queueSeq ?? 1)];
    return entry?.queueSeq === queueSeq ? storedEntry(entry) : undefined;
  }

  async ack(session: string, through: number): Promise<AckOutcome> {
    return ack(this, session, through);
  }

  async readEvents(session: string, after: number, limit: number): Promise<EventPage> {
    const state = this.sessions.get(session);
    const events = state?.events ?? [];
    const oldest = events[0]?.seq ?? 0;
    const skip = Math.max(0, after - oldest + 1);
    return {
      session,
      epoch: state?.heads.epoch || this.nextEpoch(session),
      head: state?.heads.eventHead ?? 0,
      oldest,
      events: events.slice(skip, skip + limit),
    };
  }

  async queueDepth(): Promise<number> {
    let depth = 0;
    for (const s of this.sessions.values()) depth += s.heads.queueHead - s.heads.committed;
    return depth;
  }

  async listSessions(query: SessionListQuery): Promise<SessionList> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const all = [...this.sessions.keys()]
      .filter((s) => (query.prefix === undefined || s.startsWith(query.prefix)) && query.covers(s))
      .map((s) => this.summary(s) as SessionSummary)
      .filter((s) => (after === undefined || isAfter(s, after)) && (query.state === undefined || inState(s, query.state)))
      .sort(byActivity);
    const sessions = all.slice(0, query.limit);
    const last = sessions[sessions.length - 1];
    return { sessions, next: all.length > query.limit && last ? encodeCursor(last) : null };
  }

  async sessionSummary(session: string): Promise<SessionSummary | undefined> {
    return this.summary(session);
  }

  async deleteSession(session: string): Promise<OpenCall[] | undefined> {
    const value = this.removeSession(session);
    this.listeners.announce([{ kind: 'delete', session, value }]);
    return value;
  }

  listen(listener: StoreListener): () => void {
    return this.listeners.add(listener);
  }

  readonly follow = localFeed.follow;
  readonly unfollow = localFeed.unfollow;
  readonly followSessions = localFeed.followSessions;
  readonly unfollowSessions = localFeed.unfollowSessions;

  // LedgerTx: the memory store is its own transaction.

  nextEpoch(session: string): string {
    return incarnationEpoch(this.epoch, this.deletions.get(session) ?? 0);
  }

  async sweep(policy: SweepPolicy): Promise<SweepResult> {
    const value = this.sweepSlice(policy);
    this.listeners.announce([{ kind: 'sweep', session: '', value }]);
    return value;
  }

  sweepSlice(policy: SweepPolicy): SweepResult {
    const deleted: string[] = [];
    const openCalls: OpenCall[] = [];
    if (policy.inactiveBefore !== undefined) {
      for (const [session, state] of this.sessions) {
        if (deleted.length === policy.sessions) break;
        if (state.heads.lastEventAt < policy.inactiveBefore) deleted.push(session);
      }
      for (const session of deleted) openCalls.push(...(this.removeSession(session) ?? []));
    }
    if (policy.ackedBefore === undefined) return { entriesRemoved: 0, deleted, openCalls };
    const cutoff = new Date(policy.ackedBefore).toISOString();
    const ids = [...this.sessions.keys()].filter((s) => policy.cursor === undefined || s > policy.cursor).sort();
    let entriesRemoved = 0;
    let visited = 0;
    for (const session of ids) {
      if (visited === policy.sessions || entriesRemoved >= policy.entries) return { entriesRemoved, deleted, openCalls, cursor: ids[visited - 1] as string };
      visited++;
      const state = this.sessions.get(session) as SessionState;
      let n = 0;
      while (n < state.queue.length && entriesRemoved + n < policy.entries) {
        const e = state.queue[n] as QueueEntry;
        if (e.queueSeq > state.heads.committed || e.receivedAt >= cutoff) break;
        n++;
      }
      state.queue.splice(0, n);
      entriesRemoved += n;
    }
    return { entriesRemoved, deleted, openCalls };
  }

  removeSession(session: string): OpenCall[] | undefined {
    const state = this.sessions.get(session);
    if (!state) return undefined;
    this.sessions.delete(session);
    this.deletions.set(session, (this.deletions.get(session) ?? 0) + 1);
    return openCallsOf(session, state.calls);
  }

  private summary(session: string): SessionSummary | undefined {
    const state = this.sessions.get(session);
    if (!state) return undefined;
    const h = state.heads;
    return {
      session,
      epoch: h.epoch,
      head: h.eventHead,
      oldest: state.events[0]?.seq ?? 0,
      queueHead: h.queueHead,
      committed: h.committed,
      createdAt: h.createdAt,
      lastEventAt: h.lastEventAt,
      openCalls: h.openCalls,
      errors: h.errors,
    };
  }

  heads(session: string): SessionHeads {
    return this.sessions.get(session)?.heads ?? EMPTY_HEADS;
  }

  setHeads(session: string, heads: SessionHeads): void {
    this.state(session).heads = heads;
  }

  call(session: string, callId: string): CallRecord | undefined {
    return this.sessions.get(session)?.calls.get(callId);
  }

  putCall(session: string, callId: string, record: CallRecord): void {
    this.state(session).calls.set(callId, record);
  }

  insertEvent(event: EventRecord): void {
    this.state(event.session).events.push(event);
  }

  trimEvents(session: string, keepFrom: number): void {
    const events = this.state(session).events;
    let drop = 0;
    while (drop < events.length && (events[drop] as EventRecord).seq < keepFrom) drop++;
    if (drop > 0) events.splice(0, drop);
  }

  insertQueueEntry(session: string, entry: QueueEntry): void {
    this.state(session).queue.push(entry);
  }

  private state(session: string): SessionState {
    let state = this.sessions.get(session);
    if (!state) {
      state = { heads: EMPTY_HEADS, calls: new Map(), events: [], queue: [] };
      this.sessions.set(session, state);
    }
    return state;
  }
}
