-- ratelimit_window.lua: a lease against sliding windows (window_lease in
-- ratelimit.lua, which is prepended to this script).
--
-- KEYS[i]                           a window's sorted set (<prefix>limit:{<route>}:<subject>:<value>)
-- ARGV[1]                           a member prefix unique to this call
-- ARGV[3i - 1], ARGV[3i], ARGV[3i + 1]  KEYS[i]'s window (ms), most requests in it, and the requests wanted
--
-- Returns {0, granted per key} when the call passes (each grant at least
-- 1, counted in its window), else {the ms until it could}.
local windows, maxes, wants = {}, {}, {}
for i = 1, #KEYS do
  windows[i] = tonumber(ARGV[3 * i - 1])
  maxes[i] = tonumber(ARGV[3 * i])
  wants[i] = tonumber(ARGV[3 * i + 1])
end
local wait, grants = window_lease(KEYS, windows, maxes, wants, ARGV[1], now_ms())
return { wait, unpack(grants) }
