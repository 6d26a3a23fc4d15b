/** The set of commit listeners a backend notifies; one listener's throw never stops the others. */
import type { Applied, EventRecord, Store, StoreListener } from './types.js';

/** What a committed write tells listeners: the event it appended and the queue head it moved. */
export function committed(applied: Applied): { event?: EventRecord; queueHead?: number } {
  switch (applied.kind) {
    case 'event':
      return { event: applied.value };
    case 'start':
    case 'keyedEvent':
      return applied.value.status === 'created' ? { event: applied.value.event } : {};
    case 'complete':
      return applied.value.status === 'created' ? { event: applied.value.event, queueHead: applied.value.queueSeq } : {};
    case 'ack':
    case 'delete':
    case 'sweep':
      return {};
  }
}

export class Listeners {
  private readonly all = new Set<StoreListener>();

  add(listener: StoreListener): () => void {
    this.all.add(listener);
    return () => this.all.delete(listener);
  }

  /** Announces what a batch of committed writes did: its events in order, then each queue's new head. */
  announce(batch: readonly Applied[]): void {
    const events: EventRecord[] = [];
    const queues = new Map<string, number>();
    const changed = new Set<string>();
    for (const applied of batch) {
      const deleted = applied.kind === 'delete' ? (applied.value ? [applied.session] : []) : applied.kind === 'sweep' ? applied.value.deleted : [];
      if (deleted.length > 0) {
        // Events of the old incarnation go out before the deletion, the new one's after it.
        this.events(events.splice(0));
        for (const session of deleted) {
          this.deleted(session);
          changed.add(session);
        }
        continue;
      }
      const { event, queueHead } = committed(applied);
      if (event) {
        events.push(event);
        changed.add(applied.session);
      }
      if (queueHead !== undefined) queues.set(applied.session, queueHead);
    }
    this.events(events);
    for (const [session, head] of queues) this.queue(session, head);
    for (const session of changed) this.changed(session);
  }

  /** Events committed: heard by the followers and counted as appended here (memory, sqlite). */
  private events(events: readonly EventRecord[]): void {
    this.delivered(events);
    this.appended(events);
  }

  /** Events from the live feed (redis: of the sessions this instance follows). */
  delivered(events: readonly EventRecord[]): void {
    if (events.length > 0) this.each((l) => l.events?.(events));
  }

  /** Events this instance committed. */
  appended(events: readonly EventRecord[]): void {
    if (events.length > 0) this.each((l) => l.appended?.(events));
  }

  changed(session: string): void {
    this.each((l) => l.changed?.(session));
  }

  queue(session: string, head: number): void {
    this.each((l) => l.queue?.(session, head));
  }

  deleted(session: string): void {
    this.each((l) => l.deleted?.(session));
  }

  reset(session: string): void {
    this.each((l) => l.reset?.(session));
  }

  resync(session: string): void {
    this.each((l) => l.resync?.(session));
  }

  private each(notify: (listener: StoreListener) => void): void {
    for (const l of this.all) {
      try {
        notify(l);
      } catch (err) {
        process.emitWarning(err as Error);
      }
    }
  }
}

/**
 * Store.follow and its kin for a backend whose listeners hear every commit anyway (memory,
 * sqlite: one process): there is nothing to subscribe to.
 */
export const localFeed = {
  follow: (_session: string): Promise<void> => Promise.resolve(),
  unfollow: (_session: string): void => undefined,
  followSessions: (): Promise<void> => Promise.resolve(),
  unfollowSessions: (): void => undefined,
} satisfies Pick<Store, 'follow' | 'unfollow' | 'followSessions' | 'unfollowSessions'>;
