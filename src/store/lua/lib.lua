-- Functions shared by the scripts; prepended to each script that uses them when they are loaded
-- (redis-scripts.ts), since a Redis script cannot include another.
--
-- Per session (the hash tag {s} keeps a session's keys in one slot):
--   heads   HASH  event_head, queue_head, committed, epoch, created_at, last_event_at (ms),
--                 queue_oldest (the first queue_seq still kept; absent means 1)
--   events  HASH  seq -> "<type>\n<frame head>": the status frame's text up to its seq (the
--                 frame is that head, the seq and "}}", joined in TypeScript by wire/frames.ts)
--   queue   HASH  queue_seq -> the entry as JSON (built whole in TypeScript), and
--                 "t:<queue_seq>" -> when it was received (ms), for the retention sweep
--   calls   HASH  "s\n<call_id>" -> the started call as JSON (built whole in TypeScript),
--                 "se\n<call_id>" -> its event seq, "c\n<call_id>" -> the result's fingerprint,
--                 "cq\n<call_id>" / "ce\n<call_id>" -> its queue seq and event seq
--                 (a call_id has no control characters, so "\n" cannot occur in one)
-- and, across sessions, the sessions index (ZSET member session, score = last activity in ms).
--
-- Published messages (one channel): a JSON header built whole by cjson, a newline, and for an
-- event the frame head:  {"kind":"e","session":…,"seq":…,"type":…}\n<frame head>
--                        {"kind":"q","session":…,"head":…}
--                        {"kind":"d","session":…}

-- Marks the session active at `now`, creating its epoch and created_at on its first write.
local function touch(heads, index, session, epoch, now)
  redis.call('HSETNX', heads, 'epoch', epoch)
  redis.call('HSETNX', heads, 'created_at', now)
  redis.call('HSET', heads, 'last_event_at', now)
  redis.call('ZADD', index, now, session)
end

-- Appends one event and publishes it; returns its seq.
local function append_event(heads, events, head, hist, channel, session, etype)
  local seq = redis.call('HINCRBY', heads, 'event_head', 1)
  redis.call('HSET', events, seq, etype .. '\n' .. head)
  if seq > hist then redis.call('HDEL', events, seq - hist) end
  redis.call('PUBLISH', channel, cjson.encode({kind = 'e', session = session, seq = seq, type = etype}) .. '\n' .. head)
  return seq
end

-- The call record's fields, in the order the TypeScript side reads them.
local function call_fields(calls, call_id)
  return redis.call('HMGET', calls, 's\n' .. call_id, 'se\n' .. call_id, 'c\n' .. call_id, 'cq\n' .. call_id, 'ce\n' .. call_id)
end

-- Appends seq, value pairs for the seqs from..to of a seq-keyed hash (contiguous: one HMGET);
-- seqs with no value (removed by retention) are left out.
local function append_range(out, key, from, to)
  local fields = {}
  for s = from, to do fields[#fields + 1] = s end
  local items = redis.call('HMGET', key, unpack(fields))
  for i = 1, #items do
    if items[i] then
      out[#out + 1] = from + i - 1
      out[#out + 1] = items[i]
    end
  end
end
