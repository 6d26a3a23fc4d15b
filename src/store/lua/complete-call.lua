-- Completes a call: the queue entry, the tool_completed event and the record, atomically.
-- KEYS: heads, events, queue, calls
-- ARGV: callId, expectedStarted ('' for none), entryJson, frameHead, fingerprint, historySize,
--       epoch, channel (the session's), session, now (ms), watch (the sessions channel),
--       isError ('1' or '0')
-- The session's open_calls goes down when the call was started, its errors up for an error result.
-- The entry's receipt time goes beside it (field "t:<q>"), for the retention sweep.
-- Returns {'changed', s, se, c, cq, ce} when the record is not the one the caller composed from
-- (it has a result, or another started call: the caller decides again), or {'created', q, seq,
-- unacknowledged entries}.
local rec = call_fields(KEYS[4], ARGV[1])
if rec[3] or (rec[1] or '') ~= ARGV[2] then
  return {'changed', rec[1] or false, rec[2] or false, rec[3] or false, rec[4] or false, rec[5] or false}
end
check_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[7], ARGV[8], ARGV[9])
touch(KEYS[1], ARGV[9], ARGV[7], ARGV[10], ARGV[11])
local q = redis.call('HINCRBY', KEYS[1], 'queue_head', 1)
count_fields(KEYS[1], 'queue_fields', redis.call('HSET', KEYS[3], q, ARGV[3], 't:' .. q, ARGV[10]))
local seq = append_event(KEYS[1], KEYS[2], ARGV[4], tonumber(ARGV[6]), ARGV[8], ARGV[9], 'tool_completed')
count_fields(KEYS[1], 'call_fields', redis.call('HSET', KEYS[4], 'c\n' .. ARGV[1], ARGV[5], 'cq\n' .. ARGV[1], q, 'ce\n' .. ARGV[1], seq))
if ARGV[2] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'open_calls') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'open_calls', -1) end
if ARGV[12] == '1' then redis.call('HINCRBY', KEYS[1], 'errors', 1) end
redis.call('SPUBLISH', ARGV[8], cjson.encode({kind = 'q', session = ARGV[9], head = q}))
return {'created', q, seq, unacked(KEYS[1])}
