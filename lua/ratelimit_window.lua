-- ratelimit_window.lua: a sliding-window limit on a sorted set, atomic, on
-- Redis's clock: drop entries older than the window, count, add this
-- request if under the limit.
--
-- KEYS[1]  the window's sorted set (<prefix>limit:<rule>:<subject>)
-- ARGV[1]  window, ms
-- ARGV[2]  limit: most requests in any window-long interval
-- ARGV[3]  a member unique to this request
--
-- Returns {1, 0} when the request passes (and is counted), or
--         {0, ms} when it is refused: ms until the oldest counted request
--         leaves the window.
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, math.max(1, tonumber(oldest[2]) + window - now)}
