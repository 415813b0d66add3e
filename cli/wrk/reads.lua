-- wrk script for the P3 read with limits: GET <path>, each request from the
-- next of <n> client addresses (X-Forwarded-For, which the API trusts from
-- 127.0.0.1), so that every address stays far below its read limit.
--
--   wrk -t2 -c50 -d5s -s reads.lua http://127.0.0.1:8080 -- <path> <n>
local path
local n
local i = 0

function init(args)
  path = args[1]
  n = tonumber(args[2])
  i = math.random(n)
end

function request()
  i = i % n + 1
  local a = "10." .. math.floor(i / 65536) % 256 .. "." .. math.floor(i / 256) % 256 .. "." .. i % 256
  return wrk.format("GET", path, { ["X-Forwarded-For"] = a })
end
