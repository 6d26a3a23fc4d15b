/** The set of commit listeners a backend notifies; one listener's throw never stops the others. */
import type { EventRecord, StoreListener } from './types.js';

export class Listeners {
  private readonly all = new Set<StoreListener>();

  add(listener: StoreListener): () => void {
    this.all.add(listener);
    return () => this.all.delete(listener);
  }

  events(events: readonly EventRecord[]): void {
    if (events.length === 0) return;
    for (const l of this.all) {
      try {
        l.events?.(events);
      } catch (err) {
        process.emitWarning(err as Error);
      }
    }
  }

  queue(session: string, head: number): void {
    for (const l of this.all) {
      try {
        l.queue?.(session, head);
      } catch (err) {
        process.emitWarning(err as Error);
      }
    }
  }

  resync(): void {
    for (const l of this.all) {
      try {
        l.resync?.();
      } catch (err) {
        process.emitWarning(err as Error);
      }
    }
  }
}
