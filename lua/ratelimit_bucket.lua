-- ratelimit_bucket.lua: a lease against token buckets (bucket_lease in
-- ratelimit.lua, which is prepended to this script).
--
-- KEYS[i]                             a bucket, a hash {tokens, at} (<prefix>limit:{<route>}:<subject>:<value>)
-- ARGV[3i - 2], ARGV[3i - 1], ARGV[3i]  KEYS[i]'s capacity (tokens), refill rate (tokens per second) and the tokens wanted
--
-- Returns {0, granted per key} when the call passes (each grant at least
-- 1, taken from its bucket), else {the ms until it could}.
local caps, rates, wants = {}, {}, {}
for i = 1, #KEYS do
  caps[i] = tonumber(ARGV[3 * i - 2])
  rates[i] = tonumber(ARGV[3 * i - 1])
  wants[i] = tonumber(ARGV[3 * i])
end
local wait, grants = bucket_lease(KEYS, caps, rates, wants, now_ms())
return { wait, unpack(grants) }
