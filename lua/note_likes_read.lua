-- What a note's page shows of its likes, from its likes ZSet (see
-- note_like.lua), in one call.
-- KEYS[1]: the ZSet. ARGV[1]: the viewer's user id ("" for none); ARGV[2]:
-- how many first likers to return; ARGV[3]: the ZSet's idle TTL, ms (renewed).
-- Returns false when the ZSet is not built, else {likes, liked (1, 0, or -1
-- without a viewer), first liker ids in like order...}.
if redis.call('PEXPIRE', KEYS[1], ARGV[3]) == 0 then
  return false
end
local liked = -1
if ARGV[1] ~= '' then
  liked = redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0
end
local out = { redis.call('ZCARD', KEYS[1]) - 1, liked }
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], '(0', '+inf', 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))) do
  out[#out + 1] = member
end
return out
