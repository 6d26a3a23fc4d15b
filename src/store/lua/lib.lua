-- Functions shared by the scripts; prepended to each script that uses them when they are loaded
-- (redis-scripts.ts), since a Redis script cannot include another.
--
-- Per session (the hash tag {s} keeps a session's keys in one slot):
--   heads   HASH  event_head, event_oldest (the first seq still kept; absent in data written
--                 before it was kept, then derived from the events' count), queue_head,
--                 committed, epoch, created_at, last_event_at (ms),
--                 queue_oldest (the first queue_seq still kept; absent means 1)
--   events  HASH  seq -> "<type>\n<frame head>": the status frame's text up to its seq (the
--                 frame is that head, the seq and "}}", joined in TypeScript by wire/event-composer.ts);
--                 exactly the seqs event_oldest..event_head, which check_session verifies
--                 (heads also keep queue_fields and call_fields: how many fields the queue and
--                 calls hashes hold, so that a lost or older copy of either is seen in O(1))
--   queue   HASH  queue_seq -> the entry (built whole in TypeScript: its header as JSON, a newline,
--                 the result as sent; redis-queue-entry.ts), and
--                 "t:<queue_seq>" -> when it was received (ms), for the retention sweep
--   calls   HASH  "s\n<call_id>" -> the started call as JSON (built whole in TypeScript),
--                 "se\n<call_id>" -> its event seq, "c\n<call_id>" -> the result's fingerprint,
--                 "cq\n<call_id>" / "ce\n<call_id>" -> its queue seq and event seq
--                 (a call_id has no control characters, so "\n" cannot occur in one)
-- The sessions index is not touched here: every script touches the keys of one session only (one
-- hash slot, as Redis Cluster requires), and the index (redis-index.ts) is updated after the
-- script. The heads also keep watch_at: when the session's last change went out on the sessions channel,
-- and open_calls and errors (v1.2): calls started and not completed, and error results, counted by
-- start-call.lua and complete-call.lua as they write.
--
-- Published messages, on the session's own shard channel (SPUBLISH on horologium:{s}:ch, in the
-- session's slot, so only instances with a local subscriber of the session receive them): a JSON
-- header built whole by cjson, a newline, and for an event the frame head:
--                        {"kind":"e","session":…,"seq":…,"type":…,"epoch":…}\n<frame head>
--                        {"kind":"q","session":…,"head":…}
--                        {"kind":"d","session":…}
--                        {"kind":"r","session":…,"epoch":…}  (the log started again: check_session)
-- and on the sessions channel (classic PUBLISH on horologium:sessions:changes, received only by instances
-- with a watch_sessions watcher): "<now ms>\n<session>" at most once a second per session
-- (announce_change), and "-\n<session>" for every deletion.

-- Says on the sessions channel that `session` changed, unless it did less than a second ago (the
-- receivers look again a second after each message, which covers the changes not announced).
local function announce_change(heads, watch, session, now)
  if tonumber(now) - tonumber(redis.call('HGET', heads, 'watch_at') or '0') < 1000 then return end
  redis.call('HSET', heads, 'watch_at', now)
  redis.call('PUBLISH', watch, now .. '\n' .. session)
end

-- Marks the session active at `now`, creating its epoch and created_at on its first write, and
-- announces the change to the sessions watchers.
local function touch(heads, session, epoch, now, watch)
  redis.call('HSETNX', heads, 'epoch', epoch)
  redis.call('HSETNX', heads, 'created_at', now)
  redis.call('HSET', heads, 'last_event_at', now)
  announce_change(heads, watch, session, now)
end

-- The session's unacknowledged entries (for the index's depth, redis-index.ts).
local function unacked(heads)
  return tonumber(redis.call('HGET', heads, 'queue_head') or '0') - tonumber(redis.call('HGET', heads, 'committed') or '0')
end

-- The seq of the oldest retained event of a log of `head` events (0 for an empty log).
local function log_oldest(heads, events, head)
  if head == 0 then return 0 end
  local oldest = tonumber(redis.call('HGET', heads, 'event_oldest') or '0')
  if oldest == 0 then oldest = head - redis.call('HLEN', events) + 1 end
  return oldest
end

-- True when a session's events are not exactly the seqs event_oldest..event_head (O(1): a count
-- and the two ends): the log lost events behind the server's back (a key flushed, evicted, or
-- restored from another moment than its heads).
local function log_damaged(heads, events)
  local head = tonumber(redis.call('HGET', heads, 'event_head') or '0')
  local count = redis.call('HLEN', events)
  if head == 0 then return count > 0 end
  local oldest = log_oldest(heads, events, head)
  return not (oldest >= 1 and count == head - oldest + 1 and redis.call('HEXISTS', events, head) == 1 and redis.call('HEXISTS', events, oldest) == 1)
end

-- The queue's entries are kept, whatever was lost beside them: its numbering goes on after the
-- last entry kept (a queue_seq is never used twice), `queue_oldest` names the first entry kept,
-- and when the heads are older than the queue (lost, or restored from an earlier moment) the
-- cursor goes back to just before the first entry kept: delivered again rather than lost.
-- O(entries), but only on this repair path, once.
local function repair_queue(heads, queue)
  local head = tonumber(redis.call('HGET', heads, 'queue_head') or '0')
  local low, high = nil, 0
  for _, field in ipairs(redis.call('HKEYS', queue)) do
    local q = tonumber(field)
    if q then
      if not low or q < low then low = q end
      if q > high then high = q end
    end
  end
  if high > head then
    local committed = tonumber(redis.call('HGET', heads, 'committed') or '0')
    redis.call('HSET', heads, 'queue_head', high, 'committed', math.max(committed, low - 1))
    head = high
  end
  redis.call('HSET', heads, 'queue_oldest', low or (head + 1))
end

-- Checks a session's keys against its heads, which count the fields of the queue and calls hashes
-- (queue_fields, call_fields) beside the event seqs, so every check is O(1). A key found to have
-- lost what the heads say it holds (flushed alone, evicted, restored from another moment), or
-- heads lost beside kept keys, means the session is damaged: its event log starts again as a new
-- incarnation (a new epoch, seq 1) and the reset is published, which moves every instance's
-- subscribers to it (docs/protocol.md, sections 5 and 6). The queue keeps what survives
-- (repair_queue) and the call records what survives. A session written before the heads counted
-- fields (created_at but no count) has its counts taken as they are. Returns true when it reset.
-- True when `hash` holds another number of fields than the heads count under `name` (which is then
-- set to what it holds). A session written before the heads counted (`existing`: created_at, but
-- no count) has its count taken as it is, and lost nothing.
local function fields_lost(heads, hash, name, existing)
  local len = redis.call('HLEN', hash)
  local count = redis.call('HGET', heads, name)
  if not count and existing then
    redis.call('HSET', heads, name, len)
    return false
  end
  if tonumber(count or '0') == len then return false end
  redis.call('HSET', heads, name, len)
  return true
end

local function check_session(heads, events, queue, calls, epoch, channel, session)
  local damaged = log_damaged(heads, events)
  local existing = redis.call('HEXISTS', heads, 'created_at') == 1
  if fields_lost(heads, queue, 'queue_fields', existing) then
    damaged = true
    repair_queue(heads, queue)
  end
  if fields_lost(heads, calls, 'call_fields', existing) then damaged = true end
  if not damaged then return false end
  redis.call('DEL', events)
  redis.call('HDEL', heads, 'event_head', 'event_oldest')
  redis.call('HSET', heads, 'epoch', epoch)
  redis.call('SPUBLISH', channel, cjson.encode({kind = 'r', session = session, epoch = epoch}))
  return true
end

-- Adds `added` (what HSET or HDEL returned) to one of the heads' field counts.
local function count_fields(heads, name, added)
  if added ~= 0 then redis.call('HINCRBY', heads, name, added) end
end

-- A history made smaller (a restart with a lower HOROLOGIUM_HISTORY_SIZE) is trimmed by at most
-- this many events per write, so that no script runs long.
local TRIM_PER_WRITE = 64

-- Appends one event, trims the history behind it and publishes it; returns its seq.
local function append_event(heads, events, head, hist, channel, session, etype)
  local seq = redis.call('HINCRBY', heads, 'event_head', 1)
  redis.call('HSET', events, seq, etype .. '\n' .. head)
  local oldest = log_oldest(heads, events, seq)
  local trimmed = 0
  while seq - oldest + 1 > hist and trimmed < TRIM_PER_WRITE do
    redis.call('HDEL', events, oldest)
    oldest = oldest + 1
    trimmed = trimmed + 1
  end
  redis.call('HSET', heads, 'event_oldest', oldest)
  local epoch = redis.call('HGET', heads, 'epoch')
  redis.call('SPUBLISH', channel, cjson.encode({kind = 'e', session = session, seq = seq, type = etype, epoch = epoch}) .. '\n' .. head)
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
