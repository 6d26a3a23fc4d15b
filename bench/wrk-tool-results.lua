-- wrk script of bench/durable-write.ts: every request a POST tool-results with a call_id of its own
-- (the thread's number and a counter, so no request is a repeat) and a result of about N bytes
-- (the first script argument, default 2048); with a second argument "traceparent", every request
-- also carries a W3C traceparent (bench/tracing.ts). Built in Lua so that the client costs little
-- per request.
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  local bytes = tonumber(args[1] or "2048")
  filler = string.rep("x", math.max(0, bytes - 90))
  headers = { ["content-type"] = "application/json" }
  if args[2] == "traceparent" then
    headers["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  end
  n = 0
end

function request()
  n = n + 1
  local body = '{"call_id":"t' .. tid .. '-' .. n .. '","name":"grep","result":{"content":"' .. filler ..
    '","n":' .. n .. ',"path":"src/app.ts"}}'
  return wrk.format("POST", nil, headers, body)
end
