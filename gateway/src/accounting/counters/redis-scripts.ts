/*
 * Lua scripts of the Redis counters. Each runs atomically on the Redis server, so several gateway nodes share one state.
 * Money is integer units of 1e-10 USD (see units.ts); numbers go back to Redis through string.format('%d') because
 * Lua numbers are doubles and their default string form would turn large integers into exponent notation.
 */

/**
 * KEYS: record, then (spend hash, holds zset) for the day, the month and optionally the trace.
 * ARGV: now ms, amount, hold member, hold deadline ms, daily, monthly, trace limits ('' = none),
 *       day, month, trace key TTLs ms, record TTL ms.
 * Returns {1} or {0, which, used}.
 */
export const RESERVE = `
local now = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
local names = { 'daily', 'monthly', 'trace' }
local scopes = (#KEYS - 1) / 2

for i = 1, scopes do
  local h, z = KEYS[2 * i], KEYS[2 * i + 1]
  -- Holds past their deadline (a crashed node's) stop counting.
  local stale = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, 500)
  if #stale > 0 then
    local total = 0
    for _, m in ipairs(stale) do total = total + tonumber(string.match(m, ':(%d+)$')) end
    redis.call('ZREM', z, unpack(stale))
    redis.call('HINCRBY', h, 'reserved', string.format('%d', -total))
  end
  local limit = ARGV[4 + i]
  if limit ~= '' then
    local v = redis.call('HMGET', h, 'spent', 'reserved')
    local used = (tonumber(v[1]) or 0) + (tonumber(v[2]) or 0)
    if used + amount > tonumber(limit) then
      return { 0, names[i], string.format('%d', used) }
    end
  end
end
-- Without trace keys the request is a trace of one: its limit applies to this request alone.
if scopes < 3 and ARGV[7] ~= '' and amount > tonumber(ARGV[7]) then
  return { 0, 'trace', '0' }
end

for i = 1, scopes do
  local h, z = KEYS[2 * i], KEYS[2 * i + 1]
  redis.call('HINCRBY', h, 'reserved', ARGV[2])
  redis.call('ZADD', z, ARGV[4], ARGV[3])
  redis.call('PEXPIRE', h, ARGV[7 + i])
  redis.call('PEXPIRE', z, ARGV[7 + i])
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[11])
return { 1 }
`;

/**
 * Settle (actual > 0) or release (actual = 0). KEYS as RESERVE. ARGV: hold member, reserved amount, actual amount, key TTLs ms.
 * Returns 1, or 0 when the reservation was already settled or released.
 */
export const FINISH = `
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
local scopes = (#KEYS - 1) / 2
for i = 1, scopes do
  local h, z = KEYS[2 * i], KEYS[2 * i + 1]
  -- An expired hold was already taken off 'reserved' by the sweep in RESERVE.
  if redis.call('ZREM', z, ARGV[1]) == 1 and ARGV[2] ~= '0' then
    redis.call('HINCRBY', h, 'reserved', '-' .. ARGV[2])
  end
  if ARGV[3] ~= '0' then
    redis.call('HINCRBY', h, 'spent', ARGV[3])
    redis.call('PEXPIRE', h, ARGV[3 + i])
  end
end
return 1
`;

/** KEYS: day hash, month hash. Returns {day spent, month spent}. */
export const SPEND = `
return { redis.call('HGET', KEYS[1], 'spent') or '0', redis.call('HGET', KEYS[2], 'spent') or '0' }
`;

/**
 * Sliding-window rate limit (formula of sliding-window.ts). KEYS: this minute's hash, the previous minute's hash.
 * ARGV: rpm, tpm ('' = none), tokens, ms elapsed in this minute, key TTL ms.
 * Returns {1} or {0, which, prev requests, cur requests, prev tokens, cur tokens}.
 */
export const RATE_LIMIT = `
local e = tonumber(ARGV[4])
local c = redis.call('HMGET', KEYS[1], 'r', 't')
local p = redis.call('HMGET', KEYS[2], 'r', 't')
local cr, ct = tonumber(c[1]) or 0, tonumber(c[2]) or 0
local pr, pt = tonumber(p[1]) or 0, tonumber(p[2]) or 0
local tokens = tonumber(ARGV[3])
local which = nil
if ARGV[1] ~= '' and pr * (1 - e / 60000) + cr + 1 > tonumber(ARGV[1]) then
  which = 'rpm'
elseif ARGV[2] ~= '' and pt * (1 - e / 60000) + ct + tokens > tonumber(ARGV[2]) then
  which = 'tpm'
end
if which then
  return { 0, which, string.format('%d', pr), string.format('%d', cr), string.format('%d', pt), string.format('%d', ct) }
end
redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HINCRBY', KEYS[1], 't', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return { 1 }
`;

/** KEYS: this minute's hash. ARGV: token delta (may be negative), key TTL ms. Never goes below zero. */
export const ADD_TOKENS = `
local t = (tonumber(redis.call('HGET', KEYS[1], 't')) or 0) + tonumber(ARGV[1])
if t < 0 then t = 0 end
redis.call('HSET', KEYS[1], 't', string.format('%d', t))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: the sightings zset. ARGV: now ms, window ms, unique member, most sightings kept. Returns the count in the window. */
export const COUNT_REPEAT = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - tonumber(ARGV[2])))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
local n = redis.call('ZCARD', KEYS[1])
local cap = tonumber(ARGV[4])
if n > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1)
  n = cap
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`;

/** KEYS: a spend hash. ARGV: spent units, TTL ms. Fills the window only when Redis has no spend for it. */
export const SEED = `
if redis.call('HSETNX', KEYS[1], 'spent', ARGV[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;
