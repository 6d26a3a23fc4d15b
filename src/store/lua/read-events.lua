-- Reads retained events.
-- KEYS: heads, events, queue, calls
-- ARGV: after, limit, epoch, channel, session
-- Returns {epoch, head, oldest, seq1, item1, seq2, item2, …}, each item "<type>\n<frame head>".
-- A damaged session starts its log again first (check_session), so head and oldest describe
-- what is retained.
-- A session read before its first write gets its epoch here, so that the epoch a subscriber saw
-- is the one later writes keep.
check_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4], ARGV[5])
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[3])
local epoch = redis.call('HGET', KEYS[1], 'epoch')
local head = tonumber(redis.call('HGET', KEYS[1], 'event_head') or '0')
local oldest = log_oldest(KEYS[1], KEYS[2], head)
local out = {epoch, head, oldest}
local from = math.max(tonumber(ARGV[1]) + 1, oldest)
local to = math.min(head, from + tonumber(ARGV[2]) - 1)
if from <= to and oldest > 0 then
  append_range(out, KEYS[2], from, to)
end
return out
