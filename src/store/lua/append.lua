-- Appends a generic event, once per event_id when it has one.
-- KEYS: heads, events, queue, calls
-- ARGV: frameHead, historySize, epoch, channel (the session's), session, type, now (ms),
--       keyRecord (the event_id's place among the call records, ledger.ts eventKeyRecord; '' for
--       none), fingerprint, watch (the sessions channel)
-- Returns {'created', seq}, or {'exists', fingerprint, seq} for an event_id already used.
if ARGV[8] ~= '' then
  local f = redis.call('HMGET', KEYS[4], 'c\n' .. ARGV[8], 'ce\n' .. ARGV[8])
  if f[1] then return {'exists', f[1], f[2]} end
end
check_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4], ARGV[5])
touch(KEYS[1], ARGV[5], ARGV[3], ARGV[7], ARGV[10])
local seq = append_event(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[4], ARGV[5], ARGV[6])
if ARGV[8] ~= '' then
  count_fields(KEYS[1], 'call_fields', redis.call('HSET', KEYS[4], 'c\n' .. ARGV[8], ARGV[9], 'ce\n' .. ARGV[8], seq))
end
return {'created', seq}
