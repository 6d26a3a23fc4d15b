-- Appends a generic event.
-- KEYS: heads, events, index
-- ARGV: frameHead, historySize, epoch, channel, session, type, now (ms)
-- Returns {seq}.
touch(KEYS[1], KEYS[3], ARGV[5], ARGV[3], ARGV[7])
local seq = append_event(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[4], ARGV[5], ARGV[6])
return {seq}
