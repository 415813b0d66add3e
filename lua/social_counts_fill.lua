-- Fills a user's counts hash from MySQL unless it appeared meanwhile (the
-- follow consumer writes it under the projection's lock and wins).
-- KEYS[1]: the counts hash; ARGV[1], ARGV[2]: followers, followings.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'followers', ARGV[1], 'followings', ARGV[2])
return 1
