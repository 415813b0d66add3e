-- login_client.lua: counts one client's login strikes across phones (code
-- requests, wrong or unknown codes) and locks the client out once it has
-- too many. A client is an IPv4 address or an IPv6 /64. Both keys carry the
-- client's hash tag.
--
-- KEYS[1]  lock of the client     <prefix>auth:client:{<client>}:lock
-- KEYS[2]  strikes of the client  <prefix>auth:client:{<client>}:<kind>
-- ARGV[1]  1 to add a strike, 0 only to check the lock
-- ARGV[2]  most strikes within the window
-- ARGV[3]  window, ms (a counter lives this long from its first strike)
-- ARGV[4]  lockout, ms
--
-- A locked client gets nothing done until the lock expires; the strike
-- that goes over the limit sets the lock (and clears the counter).
--
-- Returns 0 allowed, else the remaining lockout in ms (at least 1).
local left = redis.call('PTTL', KEYS[1])
if left > 0 then return left end
if ARGV[1] == '0' then return 0 end
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
if n > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[4])
  redis.call('DEL', KEYS[2])
  return tonumber(ARGV[4])
end
return 0
