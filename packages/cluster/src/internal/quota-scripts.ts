/**
 * Lua scripts of the shared quota. Every script reads the clock of the Redis server (`TIME`), so
 * workers on several hosts agree on every sliding window whatever their own clocks say.
 *
 * Keys of a token namespace `ns`: `ns:quota:epoch` (id and hold-until of the current state
 * generation), `ns:quota:pause` (shared rate-limit pause, with a TTL), `ns:quota:seq` (unique
 * members), `ns:quota:rule:<id>` (sorted set of start times, one per start, score = ms) and
 * `ns:quota:day:<start ms>` (the day's counter, expiring after the day's reset).
 */

/**
 * Atomic check-and-record of one request start across every rule.
 *
 * KEYS: epoch, pause, seq, then `nSliding` sorted-set keys, then `nBucket` counter keys.
 * ARGV: clientEpoch ('' when the client has none yet), holdMs (used when the client knew an epoch
 * that is gone: the state was lost), nSliding, nBucket, then per sliding key `windowMs limit`,
 * then per bucket key `limit endsAtMs`.
 *
 * Returns `{1, 0, now}` when recorded, `{0, waitMs, now}` when a rule, the pause or the hold after
 * a state loss blocks, and `{-1, epochId, now}` when the client's epoch is not the current one (it
 * must re-seed its own recent starts first, then retry).
 */
export const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local clientEpoch = ARGV[1]
local epoch = redis.call('GET', KEYS[1])
if not epoch then
  local hold = 0
  if clientEpoch ~= '' then hold = tonumber(ARGV[2]) end
  epoch = t[1] .. '.' .. t[2] .. '/' .. tostring(now + hold)
  redis.call('SET', KEYS[1], epoch)
end
local slash = string.find(epoch, '/', 1, true)
local epochId = string.sub(epoch, 1, slash - 1)
local holdUntil = tonumber(string.sub(epoch, slash + 1))
if epochId ~= clientEpoch then return {-1, epochId, now} end
if holdUntil > now then return {0, holdUntil - now, now} end
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return {0, pause, now} end
local nSliding = tonumber(ARGV[3])
local nBucket = tonumber(ARGV[4])
local earliest = now
for i = 1, nSliding do
  local key = KEYS[3 + i]
  local windowMs = tonumber(ARGV[3 + 2 * i])
  local limit = tonumber(ARGV[4 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  local blocking = redis.call('ZREVRANGE', key, limit - 1, limit - 1, 'WITHSCORES')
  if blocking[2] then
    local until_ = tonumber(blocking[2]) + windowMs
    if until_ > earliest then earliest = until_ end
  end
end
local base = 4 + 2 * nSliding
for j = 1, nBucket do
  local key = KEYS[3 + nSliding + j]
  local limit = tonumber(ARGV[base + 2 * j - 1])
  local endsAt = tonumber(ARGV[base + 2 * j])
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= limit and endsAt > earliest then earliest = endsAt end
end
if earliest > now then return {0, earliest - now, now} end
local seq = redis.call('INCR', KEYS[3])
for i = 1, nSliding do
  local key = KEYS[3 + i]
  redis.call('ZADD', key, now, tostring(now) .. '-' .. tostring(seq))
  redis.call('PEXPIRE', key, tonumber(ARGV[3 + 2 * i]) + 1000)
end
for j = 1, nBucket do
  local key = KEYS[3 + nSliding + j]
  redis.call('INCR', key)
  redis.call('PEXPIREAT', key, tonumber(ARGV[base + 2 * j]) + 60000)
end
return {1, 0, now}
`;

/**
 * Re-seeds one worker's own recent starts into a new state generation (after Redis lost its
 * data), so the windows and the day count again include them.
 *
 * KEYS: epoch, seq, then `nSliding` sorted-set keys, then `nBucket` counter keys.
 * ARGV: epochId, nSliding, nBucket, then per sliding key `windowMs count t1 … tcount`, then per
 * bucket key `count endsAtMs`. Returns 1, or 0 when the epoch moved on meanwhile.
 */
export const RESEED_SCRIPT = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then return 0 end
local slash = string.find(epoch, '/', 1, true)
if string.sub(epoch, 1, slash - 1) ~= ARGV[1] then return 0 end
local nSliding = tonumber(ARGV[2])
local nBucket = tonumber(ARGV[3])
local a = 4
for i = 1, nSliding do
  local key = KEYS[2 + i]
  local windowMs = tonumber(ARGV[a])
  local count = tonumber(ARGV[a + 1])
  a = a + 2
  for k = 1, count do
    local seq = redis.call('INCR', KEYS[2])
    redis.call('ZADD', key, tonumber(ARGV[a]), ARGV[a] .. '-' .. tostring(seq))
    a = a + 1
  end
  redis.call('PEXPIRE', key, windowMs + 1000)
end
for j = 1, nBucket do
  local key = KEYS[2 + nSliding + j]
  redis.call('INCRBY', key, tonumber(ARGV[a]))
  redis.call('PEXPIREAT', key, tonumber(ARGV[a + 1]) + 60000)
  a = a + 2
end
return 1
`;

/**
 * Extends the shared rate-limit pause to at least `ARGV[1]` ms from now. KEYS: pause.
 * Returns the pause's remaining ms.
 */
export const PAUSE_SCRIPT = `
local ms = tonumber(ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < ms then
  redis.call('SET', KEYS[1], '1', 'PX', ms)
  return ms
end
return left
`;
