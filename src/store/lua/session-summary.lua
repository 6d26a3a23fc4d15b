-- One session's summary fields, after checking its keys (check_session), so that head and oldest
-- describe what is retained. Creates nothing for a session that does not exist.
-- KEYS: heads, events, queue, calls
-- ARGV: epoch (for a log that starts again), channel, session
-- Returns {event_head, queue_head, committed, epoch, created_at, last_event_at, oldest, open_calls, errors}.
check_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3])
local f = redis.call('HMGET', KEYS[1], 'event_head', 'queue_head', 'committed', 'epoch', 'created_at', 'last_event_at', 'open_calls', 'errors')
return {f[1], f[2], f[3], f[4], f[5], f[6], log_oldest(KEYS[1], KEYS[2], tonumber(f[1] or '0')), f[7], f[8]}
