-- Records a session's activity in its index shard after a write committed (redis-index.ts): its
-- last activity (ZADD GT: a late update never moves it back) and, when the write changed it, its
-- number of unacknowledged entries (kept only when above 0).
-- KEYS: sessions (the shard's ZSET of last activity), depth (the shard's ZSET of unacknowledged entries)
-- ARGV: session, at (ms; '' leaves the activity as it is), unacked ('' leaves the depth as it is)
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1]) end
if ARGV[3] ~= '' then
  if tonumber(ARGV[3]) > 0 then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1]) else redis.call('ZREM', KEYS[2], ARGV[1]) end
end
return 1
