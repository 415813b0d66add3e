-- id_beats_forget.lua: forget order-id nodes whose stopped holder's leftovers
-- were handled (see platform/src/ids.rs, `beats`), keeping any that beat
-- again since the reader saw it stopped.
--
-- KEYS[1]  the beats               <prefix>ids:beats
-- ARGV[1]  Unix ms: a beat older than this is still stopped
-- ARGV[2..] the nodes
--
-- Returns how many were forgotten.
local forgotten = 0
for i = 2, #ARGV do
  local beat = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if beat and tonumber(beat) < tonumber(ARGV[1]) then
    forgotten = forgotten + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return forgotten
