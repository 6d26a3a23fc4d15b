/**
 * The Lua scripts of the Redis backend: each write is one script, so seq assignment, the
 * idempotency check, the appends and the PUBLISH of the committed event happen atomically and in
 * one order for every instance. Per session (hash tag `{s}` keeps a session's keys in one slot):
 *   heads   HASH  event_head, queue_head, committed, epoch
 *   events  HASH  seq → "type\nframe"  (the last historySize seqs; older ones deleted as they fall out)
 *   queue   HASH  queue_seq → entry JSON (never deleted)
 *   calls   HASH  call_id → call record JSON
 * and one global counter of unacknowledged entries. Seqs are contiguous, so a range is one HMGET.
 *
 * Texts that hold a seq (the frame, the call record) come from TypeScript in two parts, before and
 * after the seq, because only the script knows the seq.
 *
 * Published messages (one channel): `e\n<session>\n<seq>\n<type>\n<frame>` and `q\n<session>\n<head>`.
 */

/** Appends one event; the shared tail of every write. Expects `seq` and the event ARGV set. */
const APPEND_EVENT = `
local function append_event(heads, events, framePrefix, frameSuffix, hist, channel, session, etype)
  local seq = redis.call('HINCRBY', heads, 'event_head', 1)
  local frame = framePrefix .. seq .. frameSuffix
  redis.call('HSET', events, seq, etype .. '\\n' .. frame)
  if seq > hist then redis.call('HDEL', events, seq - hist) end
  redis.call('PUBLISH', channel, 'e\\n' .. session .. '\\n' .. seq .. '\\n' .. etype .. '\\n' .. frame)
  return seq
end
`;

/** Appends "seq\nvalue" for the seqs from..to of a seq-keyed hash (contiguous: one HMGET). */
const APPEND_RANGE = `
local function append_range(out, key, from, to)
  local fields = {}
  for s = from, to do fields[#fields + 1] = s end
  local items = redis.call('HMGET', key, unpack(fields))
  for i = 1, #items do
    if items[i] then out[#out + 1] = (from + i - 1) .. '\\n' .. items[i] end
  end
end
`;

/** KEYS: heads, events. ARGV: framePrefix, frameSuffix, historySize, epoch, channel, session, type. */
export const APPEND = `${APPEND_EVENT}
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[4])
local seq = append_event(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[5], ARGV[6], ARGV[7])
return {seq}
`;

/**
 * KEYS: heads, events, calls. ARGV: callId, framePrefix, frameSuffix, recordPrefix, historySize,
 * epoch, channel, session. Returns {'exists', record} or {'created', seq}.
 */
export const START_CALL = `${APPEND_EVENT}
local rec = redis.call('HGET', KEYS[3], ARGV[1])
if rec then return {'exists', rec} end
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[6])
local seq = append_event(KEYS[1], KEYS[2], ARGV[2], ARGV[3], tonumber(ARGV[5]), ARGV[7], ARGV[8], 'tool_starting')
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4] .. seq .. '}}')
return {'created', seq}
`;

/**
 * KEYS: heads, events, calls, queue, depth. ARGV: callId, expected record ('' for none),
 * entryJson, framePrefix, frameSuffix, recordPrefix, historySize, epoch, channel, session.
 * Returns {'changed', record} when the call record is not the one the caller composed from (it
 * then decides again), or {'created', queueSeq, seq}.
 */
export const COMPLETE_CALL = `${APPEND_EVENT}
local rec = redis.call('HGET', KEYS[3], ARGV[1]) or ''
if rec ~= ARGV[2] then return {'changed', rec} end
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[8])
local q = redis.call('HINCRBY', KEYS[1], 'queue_head', 1)
redis.call('HSET', KEYS[4], q, ARGV[3])
redis.call('INCR', KEYS[5])
local seq = append_event(KEYS[1], KEYS[2], ARGV[4], ARGV[5], tonumber(ARGV[7]), ARGV[9], ARGV[10], 'tool_completed')
redis.call('HSET', KEYS[3], ARGV[1], ARGV[6] .. q .. ',"eventSeq":' .. seq .. '}}')
redis.call('PUBLISH', ARGV[9], 'q\\n' .. ARGV[10] .. '\\n' .. q)
return {'created', q, seq}
`;

/** KEYS: heads, depth. ARGV: through. Returns {'beyond', head} or {'ok', committed}. */
export const ACK = `
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local through = tonumber(ARGV[1])
if through > head then return {'beyond', head} end
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
if through > committed then
  redis.call('HSET', KEYS[1], 'committed', through)
  redis.call('DECRBY', KEYS[2], through - committed)
  committed = through
end
return {'ok', committed}
`;

/**
 * KEYS: heads, events. ARGV: after, limit, historySize, epoch. Returns {epoch, head, oldest,
 * item...}. A session read before its first write gets its epoch here, so that the epoch a
 * subscriber saw is the one later writes keep.
 */
export const READ_EVENTS = `${APPEND_RANGE}
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[4])
local epoch = redis.call('HGET', KEYS[1], 'epoch')
local head = tonumber(redis.call('HGET', KEYS[1], 'event_head') or '0')
local hist = tonumber(ARGV[3])
local oldest = 0
if head > 0 then oldest = math.max(1, head - hist + 1) end
local out = {epoch, head, oldest}
local from = math.max(tonumber(ARGV[1]) + 1, oldest)
local to = math.min(head, from + tonumber(ARGV[2]) - 1)
if from <= to and oldest > 0 then
  append_range(out, KEYS[2], from, to)
end
return out
`;

/** KEYS: heads, queue. ARGV: after ('' = the committed cursor), limit. Returns {committed, head, entry...}. */
export const READ_QUEUE = `${APPEND_RANGE}
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local after = committed
if ARGV[1] ~= '' then after = tonumber(ARGV[1]) end
local out = {committed, head}
local from = after + 1
local to = math.min(head, after + tonumber(ARGV[2]))
if from <= to then
  append_range(out, KEYS[2], from, to)
end
return out
`;
