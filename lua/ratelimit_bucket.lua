-- ratelimit_bucket.lua: one request against token buckets (bucket_admit in
-- ratelimit.lua, which is prepended to this script).
--
-- KEYS[i]                 a bucket, a hash {tokens, at} (<prefix>limit:{<route>}:<subject>:<value>)
-- ARGV[2i - 1], ARGV[2i]  KEYS[i]'s capacity (tokens) and refill rate (tokens per second)
--
-- Returns 0 when the request passes (a token taken from every bucket), else
-- the ms until it could.
local caps, rates = {}, {}
for i = 1, #KEYS do
  caps[i] = tonumber(ARGV[2 * i - 1])
  rates[i] = tonumber(ARGV[2 * i])
end
return bucket_admit(KEYS, caps, rates, now_ms())
