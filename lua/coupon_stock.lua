-- An ordinary coupon's Redis counter of units left (a gate in front of
-- MySQL, which holds the truth).
-- KEYS[1]: the counter. ARGV[1]: "take" or "give".
-- take: 1 when a unit was taken, 0 when none is left, -1 when the counter
-- is missing (the caller loads it from MySQL and asks again).
-- give: puts back a unit a failed claim took; a missing counter stays
-- missing (its next load counts from MySQL). Returns 1.
local left = redis.call('GET', KEYS[1])
if ARGV[1] == 'give' then
  if left then
    redis.call('INCR', KEYS[1])
  end
  return 1
end
if not left then
  return -1
end
if tonumber(left) <= 0 then
  return 0
end
redis.call('DECR', KEYS[1])
return 1
