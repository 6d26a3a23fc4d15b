-- Removes a deleted session from its index shard (redis-index.ts). For the retention sweep, only
-- while its entry is still older than the cutoff: a write that came meanwhile moved it (ZADD GT),
-- and the session it made stays listed.
-- KEYS: sessions, depth (the shard's ZSETs)
-- ARGV: session, cutoff (ms; '' removes it whatever its activity)
-- Returns {1} when removed, {0} when kept.
if ARGV[2] ~= '' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if score and tonumber(score) >= tonumber(ARGV[2]) then return {0} end
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return {1}
