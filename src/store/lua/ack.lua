-- Moves the committed cursor forward (never back, never past the head).
-- KEYS: heads, depth
-- ARGV: through
-- Returns {'beyond', head} or {'ok', committed}.
local head = tonumber(redis.call('HGET', KEYS[1], 'queue_head') or '0')
local through = tonumber(ARGV[1])
if through > head then return {'beyond', head} end
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
if through > committed then
  redis.call('HSET', KEYS[1], 'committed', through)
  redis.call('DECRBY', KEYS[2], through - committed)
  committed = through
end
return {'ok', committed}
