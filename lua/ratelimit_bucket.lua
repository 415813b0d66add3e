-- ratelimit_bucket.lua: a token bucket, atomic, on Redis's clock. The bucket
-- starts full, refills continuously, and a request takes one token.
--
-- KEYS[1]  the bucket, a hash {tokens, at} (<prefix>limit:<rule>:<subject>)
-- ARGV[1]  capacity (tokens)
-- ARGV[2]  refill rate, tokens per second
--
-- Returns {1, 0} when the request passes (a token taken), or {0, ms}: ms
-- until a token is back.
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate / 1000)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
if allowed == 1 then
  return {1, 0}
end
return {0, math.ceil((1 - tokens) * 1000 / rate)}
