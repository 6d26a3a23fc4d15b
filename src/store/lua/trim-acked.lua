-- Removes a session's acknowledged entries received before a cutoff, oldest first, at most a
-- given number (a prefix of its queue: entries are acknowledged and received in queue order).
-- KEYS: heads, queue
-- ARGV: cutoff (ms; '' removes none), maxEntries
-- Returns {removed, last_event_at, unacknowledged entries}, last_event_at false for a heads hash
-- that is no session (an epoch a read left): what the sweep's index repair needs (redis-index.ts).
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
local oldest = tonumber(redis.call('HGET', KEYS[1], 'queue_oldest') or '1')
local cutoff = tonumber(ARGV[1]) or 0
local q = oldest
local last = math.min(committed, oldest + tonumber(ARGV[2]) - 1)
if ARGV[1] == '' then last = oldest - 1 end
local fields = 0
while q <= last do
  local t = tonumber(redis.call('HGET', KEYS[2], 't:' .. q) or '0')
  if t >= cutoff then break end
  fields = fields + redis.call('HDEL', KEYS[2], q, 't:' .. q)
  q = q + 1
end
if q > oldest then redis.call('HSET', KEYS[1], 'queue_oldest', q) end
-- The heads count the queue's fields (lua/lib.lua, check_session); a session written before they
-- did gets its count at its next check.
if fields > 0 and redis.call('HEXISTS', KEYS[1], 'queue_fields') == 1 then redis.call('HINCRBY', KEYS[1], 'queue_fields', -fields) end
return {q - oldest, redis.call('HGET', KEYS[1], 'last_event_at') or false, head - committed}
