-- login_phone.lua: one login step against one phone: a code request, or a
-- guess at the phone's code through a challenge. Every key is the phone's
-- (one hash tag); the client-wide counts are login_client.lua's.
--
-- KEYS[1]  the phone's code               <prefix>auth:{<phone>}:code
-- KEYS[2]  the challenge                  <prefix>auth:{<phone>}:challenge:<id>
-- KEYS[3]  a code was sent lately         <prefix>auth:{<phone>}:sms:recent
-- KEYS[4]  codes sent in the day window   <prefix>auth:{<phone>}:sms:day
-- KEYS[5]  wrong guesses, day window      <prefix>auth:{<phone>}:wrong:day
-- ARGV[1]  'code' or 'login'
-- 'code':  ARGV[2] a fresh code (stored if the phone has none),
--          ARGV[3] resend interval ms, ARGV[4] codes a day,
--          ARGV[5] day window ms, ARGV[6] code lifetime ms,
--          ARGV[7] wrong guesses a day before a guess needs a proof
-- 'login': ARGV[2] the code guessed, ARGV[3] guesses a challenge allows,
--          ARGV[4] wrong guesses a day before a guess needs a proof,
--          ARGV[5] 1 if the guess carries a valid proof of work,
--          ARGV[6] day window ms
--
-- A code request always gets a challenge of its own, bound to the phone's
-- current code. The code itself goes out by SMS at most once per resend
-- interval and ARGV[4] times per day window; a request in between is bound
-- to the code already sent (the one on the owner's phone). The day's last
-- code lives until the window renews, so a phone whose budget strangers
-- spent still has a code its owner received. Guesses count against their
-- challenge only (ARGV[3] each), so nobody can spend or lock another's
-- challenge; past ARGV[4] wrong guesses in a day, a guess at this phone
-- needs a proof of work (the caller checks it), which bounds brute force
-- without locking the owner out.
--
-- 'code' returns {status, ms, code, proof}: 'sent' (code: send it), 'kept'
-- (the code sent before stays valid; nothing to send) or 'spent' (no code
-- and no budget; ms: until the window renews); ms is the code's life
-- left otherwise; proof is 1 when guesses at this phone need a proof.
-- 'login' returns {status, ms, '', 0}: 'ok' (the code matched and is
-- spent), 'wrong' (ms: guesses left on the challenge), 'gone' (no such
-- challenge, or its code was replaced or used), 'spent' (no guesses
-- left) or 'proof' (the guess needs a proof of work).
local function over_cap(cap)
  return tonumber(redis.call('GET', KEYS[5]) or '0') >= tonumber(cap)
end

if ARGV[1] == 'code' then
  local code = redis.call('GET', KEYS[1])
  local sent = tonumber(redis.call('GET', KEYS[4]) or '0')
  local budget = sent < tonumber(ARGV[4])
  local send = false
  if not code then
    if not budget then return {'spent', math.max(redis.call('PTTL', KEYS[4]), 1), '', 0} end
    code = ARGV[2]
    send = true
  elseif budget and redis.call('EXISTS', KEYS[3]) == 0 then
    send = true
  end
  if send then
    -- A code (new or resent) lives its full life from this send.
    redis.call('SET', KEYS[1], code, 'PX', ARGV[6])
    redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
    sent = redis.call('INCR', KEYS[4])
    if sent == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[5]) end
    if sent >= tonumber(ARGV[4]) then
      local renews = redis.call('PTTL', KEYS[4])
      if renews > tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[1], renews) end
    end
  end
  local life = math.max(redis.call('PTTL', KEYS[1]), 1)
  redis.call('HSET', KEYS[2], 'code', code, 'tries', 0)
  redis.call('PEXPIRE', KEYS[2], life)
  local proof = 0
  if over_cap(ARGV[7]) then proof = 1 end
  if send then return {'sent', life, code, proof} end
  return {'kept', life, '', proof}
end

-- login
local bound = redis.call('HGET', KEYS[2], 'code')
local code = redis.call('GET', KEYS[1])
if not bound or not code or bound ~= code then return {'gone', 0, '', 0} end
local tries = tonumber(redis.call('HGET', KEYS[2], 'tries'))
if tries >= tonumber(ARGV[3]) then return {'spent', 0, '', 0} end
if ARGV[5] ~= '1' and over_cap(ARGV[4]) then return {'proof', 0, '', 0} end
if code == ARGV[2] then
  redis.call('DEL', KEYS[1], KEYS[2])
  return {'ok', 0, '', 0}
end
tries = redis.call('HINCRBY', KEYS[2], 'tries', 1)
if redis.call('INCR', KEYS[5]) == 1 then redis.call('PEXPIRE', KEYS[5], ARGV[6]) end
return {'wrong', tonumber(ARGV[3]) - tries, '', 0}
