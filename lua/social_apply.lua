-- One user's side of a follow change (all keys under the user's hash tag).
-- KEYS[1]: the user's list ZSet (followings of the follower, or followers of
-- the followee); KEYS[2]: the user's counts hash.
-- ARGV[1]: "add" or "rem"; ARGV[2]: the other user's id; ARGV[3]: the follow
-- time, ms (the score); ARGV[4], ARGV[5]: the user's followers and
-- followings counts as the projection has them, or "" when they did not change.
--
-- The caller holds the pair's projection row lock, so the changes of one pair
-- reach Redis in the projection's order. A list is changed only if it exists:
-- an existing list was built from MySQL (it holds the marker "-"), and a
-- missing one is rebuilt by its next reader, never created partial here.
if redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[1] == 'add' then
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  else
    redis.call('ZREM', KEYS[1], ARGV[2])
  end
end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], 'followers', ARGV[4], 'followings', ARGV[5])
end
return 1
