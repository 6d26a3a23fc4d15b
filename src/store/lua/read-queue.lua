-- Reads queue entries.
-- KEYS: heads, events, queue, calls
-- ARGV: after ('' = the committed cursor), limit, epoch, channel, session (for check_session)
-- Returns {committed, head, oldest, q1, entry1, q2, entry2, …}.
check_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4], ARGV[5])
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local after = committed
if ARGV[1] ~= '' then after = tonumber(ARGV[1]) end
-- Retention removes a prefix of acknowledged entries; queue_oldest is the first one kept.
local oldest = 0
if head > 0 then oldest = tonumber(redis.call('HGET', KEYS[1], 'queue_oldest') or '1') end
if oldest > head then oldest = 0 end
local out = {committed, head, oldest}
local from = math.max(after + 1, oldest)
local to = math.min(head, from + tonumber(ARGV[2]) - 1)
if from <= to then
  append_range(out, KEYS[3], from, to)
end
return out
