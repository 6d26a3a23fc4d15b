-- Moves the committed cursor forward (never back, never past the head).
-- KEYS: heads
-- ARGV: through
-- Returns {'beyond', head} or {'ok', committed, unacknowledged entries}.
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local through = tonumber(ARGV[1])
if through > head then return {'beyond', head} end
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
if through > committed then
  redis.call('HSET', KEYS[1], 'committed', through)
  committed = through
end
return {'ok', committed, head - committed}
