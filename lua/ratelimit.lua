-- ratelimit.lua: the limiter rules, prepended to every script that limits
-- (ratelimit_window.lua, ratelimit_bucket.lua and seckill.lua), so each rule
-- is written once. Times are Redis's clock, in ms; a request is admitted by
-- every limit it counts against or by none (a refused request uses nothing).
--
-- A caller may take several requests' worth at once (a lease, `wants[i]`),
-- to spend in its own memory: each limit grants what it has room for, up to
-- the want, and at least one, or the whole call is refused.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Sliding windows on sorted sets: keys[i] admits at most maxes[i] requests
-- in any windows[i] ms. Drops entries older than the window and counts;
-- only if every set has room, adds min(wants[i], room) members to each
-- (`member`:1, `member`:2, ...). Returns 0 and the grants, or the ms until
-- the fullest one has room (at least 1) and nothing.
local function window_lease(keys, windows, maxes, wants, member, now)
  local wait, grants = 0, {}
  for i, key in ipairs(keys) do
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windows[i])
    local room = maxes[i] - redis.call('ZCARD', key)
    if room < 1 then
      local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      wait = math.max(wait, tonumber(oldest[2]) + windows[i] - now, 1)
    end
    grants[i] = math.min(wants[i], room)
  end
  if wait > 0 then
    return wait, {}
  end
  for i, key in ipairs(keys) do
    local args = {}
    for j = 1, grants[i] do
      args[2 * j - 1] = now
      args[2 * j] = member .. ':' .. j
    end
    redis.call('ZADD', key, unpack(args))
    redis.call('PEXPIRE', key, windows[i])
  end
  return 0, grants
end

-- One request against sliding windows: 0, or the ms until it could pass.
local function window_admit(keys, windows, maxes, member, now)
  local wants = {}
  for i = 1, #keys do
    wants[i] = 1
  end
  local wait = window_lease(keys, windows, maxes, wants, member, now)
  return wait
end

-- Token buckets, hashes {tokens, at}: keys[i] starts full at caps[i] tokens
-- and refills continuously at rates[i] per second. Only if every bucket has
-- a token, takes min(wants[i], whole tokens) from each. Returns 0 and the
-- grants, or the ms until the emptiest has one and nothing.
local function bucket_lease(keys, caps, rates, wants, now)
  local tokens, grants, wait = {}, {}, 0
  for i, key in ipairs(keys) do
    local state = redis.call('HMGET', key, 'tokens', 'at')
    local have = tonumber(state[1]) or caps[i]
    local at = tonumber(state[2]) or now
    have = math.min(caps[i], have + math.max(0, now - at) * rates[i] / 1000)
    tokens[i] = have
    if have < 1 then
      wait = math.max(wait, math.ceil((1 - have) * 1000 / rates[i]))
    end
    grants[i] = math.min(wants[i], math.floor(have))
  end
  for i, key in ipairs(keys) do
    local left = tokens[i]
    if wait == 0 then
      left = left - grants[i]
    end
    redis.call('HSET', key, 'tokens', tostring(left), 'at', now)
    redis.call('PEXPIRE', key, math.ceil(caps[i] / rates[i] * 1000) + 1000)
  end
  if wait > 0 then
    return wait, {}
  end
  return 0, grants
end
