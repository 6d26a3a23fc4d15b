-- Starts a call: the tool_starting event and the call record, unless the call_id has one.
-- KEYS: heads, events, queue, calls
-- ARGV: callId, frameHead, startedJson, historySize, epoch, channel (the session's), session, now (ms),
--       watch (the sessions channel)
-- Returns {'exists', s, se, c, cq, ce} (the record's fields) or {'created', seq}.
local rec = call_fields(KEYS[4], ARGV[1])
if rec[1] or rec[3] then return {'exists', rec[1] or false, rec[2] or false, rec[3] or false, rec[4] or false, rec[5] or false} end
check_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[5], ARGV[6], ARGV[7])
touch(KEYS[1], ARGV[7], ARGV[5], ARGV[8], ARGV[9])
local seq = append_event(KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[4]), ARGV[6], ARGV[7], 'tool_starting')
count_fields(KEYS[1], 'call_fields', redis.call('HSET', KEYS[4], 's\n' .. ARGV[1], ARGV[3], 'se\n' .. ARGV[1], seq))
redis.call('HINCRBY', KEYS[1], 'open_calls', 1)
return {'created', seq}
