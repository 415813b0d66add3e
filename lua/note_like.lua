-- Toggles one user's like of a note, in the note's likes ZSet (member: user
-- id, score: like time in ms; the marker "-" at 0 says it was built from
-- MySQL). Run while the caller holds the note's row lock in MySQL.
-- KEYS[1]: the ZSet. ARGV[1]: the user id; ARGV[2]: now, ms; ARGV[3]: the
-- ZSet's idle TTL, ms (renewed).
-- Returns false when the ZSet is not built (the caller rebuilds it and asks
-- again), else {1 if the user likes the note now, 0 if not; likes after}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
local liked
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  liked = 0
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  liked = 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return { liked, redis.call('ZCARD', KEYS[1]) - 1 }
