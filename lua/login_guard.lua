-- login_guard.lua: counts login strikes (code requests, wrong codes) per phone
-- and per client IP, and locks either out once it has too many.
--
-- KEYS[1]  lock of the phone     <prefix>auth:lock:phone:<phone>
-- KEYS[2]  lock of the IP        <prefix>auth:lock:ip:<ip>
-- KEYS[3]  strikes of the phone  <prefix>auth:<kind>:phone:<phone>
-- KEYS[4]  strikes of the IP     <prefix>auth:<kind>:ip:<ip>
-- ARGV[1]  1 to add a strike, 0 only to check the locks
-- ARGV[2]  most strikes per phone within the window
-- ARGV[3]  most strikes per IP within the window
-- ARGV[4]  window, ms (a counter lives this long from its first strike)
-- ARGV[5]  lockout, ms
--
-- A locked phone or IP gets nothing done until the lock expires; the strike
-- that goes over a limit sets the lock (and clears that counter). Strikes of
-- one kind count across codes: a fresh code does not reset them.
--
-- Returns 0 allowed, else the remaining lockout in ms (at least 1).
local function locked()
  local a = redis.call('PTTL', KEYS[1])
  local b = redis.call('PTTL', KEYS[2])
  local m = math.max(a, b)
  if m > 0 then return m end
  return 0
end
local left = locked()
if left > 0 or ARGV[1] == '0' then
  return left
end
local over = false
for i = 3, 4 do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[4])
  end
  if n > tonumber(ARGV[i - 1]) then
    redis.call('SET', KEYS[i - 2], '1', 'PX', ARGV[5])
    redis.call('DEL', KEYS[i])
    over = true
  end
end
if over then
  return tonumber(ARGV[5])
end
return 0
