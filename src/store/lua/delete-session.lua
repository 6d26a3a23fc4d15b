-- Deletes a session: its heads, events, queue and call records, its place in the sessions index
-- and its share of the depth counter; publishes the deletion on its channel (its subscribers on
-- every instance are told) and on the sessions channel (for the watchers). The next write creates
-- a new epoch (HSETNX in touch).
-- KEYS: heads, events, queue, calls, depth, index
-- ARGV: session, channel (the session's), inactiveBefore (ms; '' for an explicit DELETE): the
--       retention sweep deletes only a session still inactive when this runs (a write may have
--       come meanwhile), watch (the sessions channel)
-- Returns {1}, or {0} when the session did not exist (a read may have left an epoch-only heads
-- hash: it stays, so that the epoch a subscriber saw is the one the first write keeps).
if not redis.call('HGET', KEYS[1], 'created_at') then return {0} end
if ARGV[3] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'last_event_at') or '0') >= tonumber(ARGV[3]) then return {0} end
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
if head > committed then redis.call('DECRBY', KEYS[5], head - committed) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('SPUBLISH', ARGV[2], cjson.encode({kind = 'd', session = ARGV[1]}))
redis.call('PUBLISH', ARGV[4], '-\n' .. ARGV[1])
return {1}
