-- wrk script for the P1 benchmark: POST <path> with a different shopper's
-- bearer token on each request, round robin over a token file. Prints one
-- "ACCEPTED <order id>" line per 202 answer when done, for the invariant check.
--
--   wrk -t2 -c50 -d10s --latency -s seckill.lua http://127.0.0.1:8080 -- <tokens file> <path>
--
-- args[1]: file with one token per line; args[2]: request path, e.g. /vouchers/7/seckill.
local tokens = {}
local path
local i = 0
local threads = {}
accepted = {}

function setup(thread)
  threads[#threads + 1] = thread
end

function init(args)
  for line in io.lines(args[1]) do
    tokens[#tokens + 1] = line
  end
  path = args[2]
  i = math.random(#tokens)
end

function request()
  i = i % #tokens + 1
  return wrk.format("POST", path, { ["Authorization"] = "Bearer " .. tokens[i] })
end

function response(status, headers, body)
  if status == 202 then
    accepted[#accepted + 1] = string.match(body, '"order_id":"(%d+)"')
  end
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    for _, id in ipairs(thread:get("accepted")) do
      io.write("ACCEPTED " .. id .. "\n")
    end
  end
end
