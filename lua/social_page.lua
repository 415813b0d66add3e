-- One page of a follow list, newest first.
-- KEYS[1]: the list ZSet (scores: follow time, ms; the marker "-" at 0).
-- ARGV[1]: the cursor's score ("+inf" for the first page); ARGV[2]: the
-- cursor's member ("" for none); ARGV[3]: how many entries to return;
-- ARGV[4]: the list's idle TTL, ms (a read keeps a warm list in Redis).
-- Returns false when the list is not built, else
-- {size, member1, score1, member2, score2, ...}: size without the marker,
-- then up to ARGV[3] entries after the cursor. Entries of equal score come in
-- descending byte order of member, so the cursor skips those not after it.
if redis.call('PEXPIRE', KEYS[1], ARGV[4]) == 0 then
  return false
end
local max, after, want = ARGV[1], ARGV[2], tonumber(ARGV[3])
local max_score = tonumber(max)
local out = { redis.call('ZCARD', KEYS[1]) - 1 }
local offset = 0
while true do
  local batch = redis.call('ZREVRANGEBYSCORE', KEYS[1], max, '(0', 'WITHSCORES', 'LIMIT', offset, want + 1)
  for i = 1, #batch, 2 do
    local member, score = batch[i], batch[i + 1]
    if after == '' or tonumber(score) < max_score or member < after then
      if (#out - 1) / 2 < want then
        out[#out + 1] = member
        out[#out + 1] = score
      end
    end
  end
  if (#out - 1) / 2 >= want or #batch < (want + 1) * 2 then
    return out
  end
  offset = offset + want + 1
end
