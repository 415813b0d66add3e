-- wrk script for the P1 benchmark: POST <path> with a different shopper's
-- bearer token on each request, round robin over a token file.
--
--   wrk -t2 -c50 -d10s --latency -s seckill.lua http://127.0.0.1:8080 -- <tokens file> <path>
--
-- args[1]: file with one token per line; args[2]: request path, e.g. /vouchers/7/seckill.
local tokens = {}
local path
local i = 0

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
