-- ratelimit_window.lua: one request against sliding windows (window_admit
-- in ratelimit.lua, which is prepended to this script).
--
-- KEYS[i]                 a window's sorted set (<prefix>limit:{<route>}:<subject>:<value>)
-- ARGV[1]                 a member unique to this request
-- ARGV[2i], ARGV[2i + 1]  KEYS[i]'s window (ms) and most requests in it
--
-- Returns 0 when the request passes (counted in every window), else the ms
-- until it could.
local windows, maxes = {}, {}
for i = 1, #KEYS do
  windows[i] = tonumber(ARGV[2 * i])
  maxes[i] = tonumber(ARGV[2 * i + 1])
end
return window_admit(KEYS, windows, maxes, ARGV[1], now_ms())
