-- Reads retained events.
-- KEYS: heads, events
-- ARGV: after, limit, historySize, epoch
-- Returns {epoch, head, oldest, seq1, item1, seq2, item2, …}, each item "<type>\n<frame head>".
-- A session read before its first write gets its epoch here, so that the epoch a subscriber saw
-- is the one later writes keep.
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
