/**
 * The Lua scripts of the Redis backend, one file each in lua/ (each opens with its KEYS and ARGV),
 * with lua/lib.lua (the data layout, and the functions the write scripts share) prepended. Each
 * write is one script, so seq assignment, the idempotency check, the appends and the PUBLISH of
 * the committed event happen atomically and in one order for every instance.
 */
import { readFileSync } from 'node:fs';

const read = (name: string): string => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
const LIB = read('lib');
const withLib = (name: string): string => `${LIB}\n${read(name)}`;

export const SCRIPTS = {
  hAppend: { numberOfKeys: 5, lua: withLib('append') },
  hStartCall: { numberOfKeys: 5, lua: withLib('start-call') },
  hCompleteCall: { numberOfKeys: 6, lua: withLib('complete-call') },
  hAck: { numberOfKeys: 2, lua: read('ack') },
  hReadEvents: { numberOfKeys: 4, lua: withLib('read-events') },
  hSessionSummary: { numberOfKeys: 4, lua: withLib('session-summary') },
  hReadQueue: { numberOfKeys: 4, lua: withLib('read-queue') },
  hDeleteSession: { numberOfKeys: 6, lua: read('delete-session') },
  hTrimAcked: { numberOfKeys: 2, lua: read('trim-acked') },
} as const;
