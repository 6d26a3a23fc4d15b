/**
 * The Lua scripts of the Redis backend, one file each in lua/ (each opens with its KEYS and ARGV),
 * with lua/lib.lua (the data layout, and the functions the write scripts share) prepended. Each
 * write is one script, so seq assignment, the idempotency check, the appends and the SPUBLISH of
 * the committed event happen atomically and in one order for every instance. Every script touches
 * the keys of one hash slot only (one session's, or one index shard's), as Redis Cluster requires.
 */
import { readFileSync } from 'node:fs';

const read = (name: string): string => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
const LIB = read('lib');
const withLib = (name: string): string => `${LIB}\n${read(name)}`;

export const SCRIPTS = {
  hAppend: { numberOfKeys: 4, lua: withLib('append') },
  hStartCall: { numberOfKeys: 4, lua: withLib('start-call') },
  hCompleteCall: { numberOfKeys: 4, lua: withLib('complete-call') },
  hAck: { numberOfKeys: 1, lua: read('ack') },
  hReadEvents: { numberOfKeys: 4, lua: withLib('read-events') },
  hSessionSummary: { numberOfKeys: 4, lua: withLib('session-summary') },
  hReadQueue: { numberOfKeys: 4, lua: withLib('read-queue') },
  hDeleteSession: { numberOfKeys: 4, lua: read('delete-session') },
  hTrimAcked: { numberOfKeys: 2, lua: read('trim-acked') },
  hIndexTouch: { numberOfKeys: 2, lua: read('index-touch') },
  hIndexRemove: { numberOfKeys: 2, lua: read('index-remove') },
} as const;

export type Reply = Array<string | number | null>;
export type Arg = string | number;
/** The scripts as commands of a connection (defineCommand), each taking its keys then its arguments. */
export type Scripts = { [K in keyof typeof SCRIPTS]: (...keysAndArgs: Arg[]) => Promise<Reply> } & {
  /** The queue read with every bulk reply as a Buffer (ioredis's Buffer variant of the command). */
  hReadQueueBuffer: (...keysAndArgs: Arg[]) => Promise<Array<Buffer | number | null>>;
};
