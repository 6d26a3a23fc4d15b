-- Deletes a session: its heads, events, queue and call records (its place in the sessions index
-- is removed after, redis-index.ts); publishes the deletion on its channel (its subscribers on
-- every instance are told) and on the sessions channel (for the watchers). The next write creates
-- a new epoch (HSETNX in touch).
-- KEYS: heads, events, queue, calls
-- ARGV: session, channel (the session's), inactiveBefore (ms; '' for an explicit DELETE): the
--       retention sweep deletes only a session still inactive when this runs (a write may have
--       come meanwhile), watch (the sessions channel)
-- Returns {1, open}: open lists the calls it still had open (started, never completed), flat:
-- call_id, the started call's JSON, its event seq, for each; {0, false} when the session did not exist (a read may have left an epoch-only heads
-- hash: it stays, so that the epoch a subscriber saw is the one the first write keeps); {0,
-- last_event_at} when it is active again since the cutoff (the index learns of it).
-- (ARGV[1], the session, only goes into the deletion's message.)
if not redis.call('HGET', KEYS[1], 'created_at') then return {0, false} end
local last = redis.call('HGET', KEYS[1], 'last_event_at') or '0'
if ARGV[3] ~= '' and tonumber(last) >= tonumber(ARGV[3]) then return {0, last} end
local fields = redis.call('HGETALL', KEYS[4])
local record = {}
for i = 1, #fields, 2 do record[fields[i]] = fields[i + 1] end
local open = {}
for field, started in pairs(record) do
  if string.sub(field, 1, 2) == 's\n' then
    local call_id = string.sub(field, 3)
    if not record['c\n' .. call_id] then
      open[#open + 1] = call_id
      open[#open + 1] = started
      open[#open + 1] = record['se\n' .. call_id] or '0'
    end
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('SPUBLISH', ARGV[2], cjson.encode({kind = 'd', session = ARGV[1]}))
redis.call('PUBLISH', ARGV[4], '-\n' .. ARGV[1])
return {1, open}
