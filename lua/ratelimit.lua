-- ratelimit.lua: the limiter rules, prepended to every script that limits
-- (ratelimit_window.lua, ratelimit_bucket.lua and seckill.lua), so each rule
-- is written once. Times are Redis's clock, in ms; a request is admitted by
-- every limit it counts against or by none (a refused request uses nothing).

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Sliding windows on sorted sets: keys[i] admits at most maxes[i] requests
-- in any windows[i] ms. Drops entries older than the window, counts, and adds
-- `member` to every set only if each has room. Returns 0, or the ms until
-- the fullest one has room (at least 1).
local function window_admit(keys, windows, maxes, member, now)
  local wait = 0
  for i, key in ipairs(keys) do
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windows[i])
    if redis.call('ZCARD', key) >= maxes[i] then
      local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      wait = math.max(wait, tonumber(oldest[2]) + windows[i] - now, 1)
    end
  end
  if wait > 0 then
    return wait
  end
  for i, key in ipairs(keys) do
    redis.call('ZADD', key, now, member)
    redis.call('PEXPIRE', key, windows[i])
  end
  return 0
end

-- Token buckets, hashes {tokens, at}: keys[i] starts full at caps[i] tokens
-- and refills continuously at rates[i] per second. Takes one token from
-- every bucket only if each has one. Returns 0, or the ms until the emptiest
-- has one.
local function bucket_admit(keys, caps, rates, now)
  local tokens, wait = {}, 0
  for i, key in ipairs(keys) do
    local state = redis.call('HMGET', key, 'tokens', 'at')
    local have = tonumber(state[1]) or caps[i]
    local at = tonumber(state[2]) or now
    have = math.min(caps[i], have + math.max(0, now - at) * rates[i] / 1000)
    tokens[i] = have
    if have < 1 then
      wait = math.max(wait, math.ceil((1 - have) * 1000 / rates[i]))
    end
  end
  for i, key in ipairs(keys) do
    local left = tokens[i]
    if wait == 0 then
      left = left - 1
    end
    redis.call('HSET', key, 'tokens', tostring(left), 'at', now)
    redis.call('PEXPIRE', key, math.ceil(caps[i] / rates[i] * 1000) + 1000)
  end
  return wait
end
