/**
 * The Redis backend's sessions index, outside the write scripts: Redis Cluster lets a script touch
 * the keys of one hash slot only, and a session's keys are in its own slot, so the index cannot be
 * in the same script as the write. It is split into SHARDS keys, each in a slot of its own
 * (`horologium:{idx:K}:sessions`, K from the session id), so that no one key (and no one cluster
 * node) holds it all, and each shard has a second ZSET of the sessions' unacknowledged entries
 * (`horologium:{idx:K}:depth`, only sessions with some), which the queue-depth gauge sums.
 *
 * After a write commits, its session's shard is updated (`ZADD GT`, so a late update never moves
 * a session back). A crash between the two leaves the session missing or late in the index (never
 * a lost write): its next write repairs it, and so does the retention sweep, which walks the
 * sessions' own keys (not the index) and records each one's activity and depth (docs/redis.md).
 * A deletion removes the entry after the session's keys; an entry whose session is gone is skipped
 * by every read and removed by the sweep.
 */
import type { Redis } from 'ioredis';
import type { Scripts } from './redis-scripts.js';

const PREFIX = 'horologium';
export const SHARDS = 16;
/** Rows read from a shard at a time while merging the shards in order. */
const CHUNK = 64;

/** The shard of a session (FNV-1a of its id): stable, whatever the cluster's layout. */
export function shardOf(session: string): number {
  let hash = 0x811c9dc5;
  for (let k = 0; k < session.length; k++) hash = Math.imul(hash ^ session.charCodeAt(k), 0x01000193);
  return (hash >>> 0) % SHARDS;
}

const shardKeys = (shard: number) => ({ sessions: `${PREFIX}:{idx:${shard}}:sessions`, depth: `${PREFIX}:{idx:${shard}}:depth` });

/** A place in the newest-first order: the last activity (ms) and, among equal ones, the id (descending). */
export interface IndexPosition {
  lastEventAt: number;
  session: string;
}

/** Newest first; equal activity in descending id order, as ZREVRANGEBYSCORE gives it. */
const before = (a: IndexPosition, b: IndexPosition): boolean => a.lastEventAt > b.lastEventAt || (a.lastEventAt === b.lastEventAt && a.session > b.session);

export class SessionIndex {
  /** `run` makes a failure to reach Redis the store being unavailable (redis.ts). */
  constructor(
    private readonly redis: Redis & Scripts,
    private readonly run: <T>(command: () => Promise<T>) => Promise<T>,
  ) {}

  /** After a write committed: the session active at `at` (ms), with `unacked` entries when the write changed that. */
  async touched(session: string, at: number | undefined, unacked: number | undefined): Promise<void> {
    const k = shardKeys(shardOf(session));
    await this.run(() => this.redis.hIndexTouch(k.sessions, k.depth, session, at ?? '', unacked ?? ''));
  }

  /** After a deletion: removed; with a cutoff (the sweep), only while its activity is older. */
  async removed(session: string, cutoff?: number): Promise<boolean> {
    const k = shardKeys(shardOf(session));
    const [removed] = await this.run(() => this.redis.hIndexRemove(k.sessions, k.depth, session, cutoff ?? ''));
    return Number(removed) === 1;
  }

  /**
   * The sessions after `start` in newest-first order, merged from the shards a chunk at a time,
   * with their activity; the caller stops when it has a page.
   */
  async *newestFirst(start: IndexPosition): AsyncGenerator<IndexPosition> {
    const shards = Array.from({ length: SHARDS }, (_, shard) => ({ key: shardKeys(shard).sessions, rows: [] as IndexPosition[], offset: 0, done: false }));
    const fill = async (shard: (typeof shards)[number]) => {
      const flat = await this.run(() => this.redis.zrevrangebyscore(shard.key, start.lastEventAt, '-inf', 'WITHSCORES', 'LIMIT', shard.offset, CHUNK));
      shard.offset += flat.length / 2;
      shard.done = flat.length < 2 * CHUNK;
      for (let k = 0; k < flat.length; k += 2) {
        const row = { session: flat[k] as string, lastEventAt: Number(flat[k + 1]) };
        if (before(start, row)) shard.rows.push(row);
      }
    };
    await Promise.all(shards.map(fill));
    for (;;) {
      let next: (typeof shards)[number] | undefined;
      for (const shard of shards) {
        while (shard.rows.length === 0 && !shard.done) await fill(shard);
        const head = shard.rows[0];
        if (head && (!next || before(head, next.rows[0] as IndexPosition))) next = shard;
      }
      if (!next) return;
      yield next.rows.shift() as IndexPosition;
    }
  }

  /** At most `limit` sessions inactive since before `cutoff` (ms), the longest inactive first. */
  async expired(cutoff: number, limit: number): Promise<string[]> {
    const rows = await Promise.all(
      Array.from({ length: SHARDS }, (_, shard) => this.run(() => this.redis.zrangebyscore(shardKeys(shard).sessions, '-inf', `(${cutoff}`, 'WITHSCORES', 'LIMIT', 0, limit))),
    );
    const all: IndexPosition[] = [];
    for (const flat of rows) for (let k = 0; k < flat.length; k += 2) all.push({ session: flat[k] as string, lastEventAt: Number(flat[k + 1]) });
    return all
      .sort((a, b) => a.lastEventAt - b.lastEventAt)
      .slice(0, limit)
      .map((row) => row.session);
  }

  /** At most `limit` sessions active since `since` (ms). */
  async activeSince(since: number, limit: number): Promise<string[]> {
    const shards = await Promise.all(Array.from({ length: SHARDS }, (_, shard) => this.run(() => this.redis.zrangebyscore(shardKeys(shard).sessions, since, '+inf', 'LIMIT', 0, limit))));
    return shards.flat().slice(0, limit);
  }

  /**
   * Moves the index of a version before the shards (one `horologium:sessions` ZSET and a
   * `horologium:depth` counter, single Redis only) into the shards, once, at start-up: each
   * session with its activity and its unacknowledged entries (`unackedOf` reads them).
   */
  async adoptLegacy(unackedOf: (session: string) => Promise<number>): Promise<void> {
    const legacy = `${PREFIX}:sessions`;
    if ((await this.run(() => this.redis.exists(legacy))) === 0) return;
    let cursor = '0';
    do {
      const [next, flat] = await this.run(() => this.redis.zscan(legacy, cursor, 'COUNT', 500));
      cursor = next;
      const rows: Array<[string, number]> = [];
      for (let k = 0; k < flat.length; k += 2) rows.push([flat[k] as string, Number(flat[k + 1])]);
      await Promise.all(rows.map(async ([session, at]) => this.touched(session, at, await unackedOf(session))));
    } while (cursor !== '0');
    await this.run(() => this.redis.del(legacy, `${PREFIX}:depth`));
  }

  /** Unacknowledged entries across all sessions: the sum of the depth shards. */
  async depth(): Promise<number> {
    const shards = await Promise.all(Array.from({ length: SHARDS }, (_, shard) => this.run(() => this.redis.zrange(shardKeys(shard).depth, 0, -1, 'WITHSCORES'))));
    let total = 0;
    for (const flat of shards) for (let k = 1; k < flat.length; k += 2) total += Number(flat[k]);
    return total;
  }
}
