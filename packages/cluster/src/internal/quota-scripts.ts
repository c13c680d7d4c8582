/**
 * Lua scripts of the shared quota. Every script reads the clock of the Redis server (`TIME`), so
 * workers on several hosts agree on every sliding window whatever their own clocks say.
 *
 * Keys of a token namespace `ns`: `ns:quota:epoch` (id and hold-until of the current state
 * generation), `ns:quota:pause` (shared rate-limit pause, with a TTL), `ns:quota:seq` (unique
 * members), `ns:quota:rule:<id>` (sorted set, one member per request, score = the latest instant it can
 * have arrived, in ms: see {@link ACQUIRE_SCRIPT}) and
 * `ns:quota:day:<start ms>` (the day's counter, expiring after the day's reset).
 */

/**
 * Atomic check-and-record of one request start across every rule.
 *
 * A sorted set holds one member per request, scored with the latest instant the request can have
 * arrived at the service: while it is in flight, its start plus `boundMs` (the longest it can take
 * to arrive: see `RedisQuota`), a score in the future; once settled ({@link SETTLE_SCRIPT}), the
 * Redis time of the settle. So an entry scored after `now` is in flight and blocks as if it were
 * arriving "now" (answered with a wait of at most `pollMs`: the settle of another worker is not
 * announced, it is polled for); an entry whose bound has passed without a settle (its worker died
 * mid-request) counts at its bound, like a request that arrived as late as it possibly could.
 *
 * KEYS: epoch, pause, seq, then `nSliding` sorted-set keys, then `nBucket` counter keys.
 * ARGV: clientEpoch ('' when the client has none yet), holdMs (used when the client knew an epoch
 * that is gone: the state was lost), nSliding, nBucket, member (unique per request), boundMs,
 * pollMs, then per sliding key `windowMs limit ttlMs`, then per bucket key `limit endsAtMs`.
 *
 * Returns `{1, 0, now, 0}` when recorded, `{0, waitMs, now, inFlight}` when a rule, the pause or
 * the hold after a state loss blocks (`inFlight` 1 when a request in flight is what blocks), and
 * `{-1, epochId, now, 0}` when the client's epoch is not the current one (it must re-seed its own
 * recent requests first, then retry).
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
if epochId ~= clientEpoch then return {-1, epochId, now, 0} end
if holdUntil > now then return {0, holdUntil - now, now, 0} end
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return {0, pause, now, 0} end
local nSliding = tonumber(ARGV[3])
local nBucket = tonumber(ARGV[4])
local member = ARGV[5]
local boundMs = tonumber(ARGV[6])
local pollMs = tonumber(ARGV[7])
local earliest = now
local inFlight = 0
for i = 1, nSliding do
  local key = KEYS[3 + i]
  local windowMs = tonumber(ARGV[5 + 3 * i])
  local limit = tonumber(ARGV[6 + 3 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  local blocking = redis.call('ZREVRANGE', key, limit - 1, limit - 1, 'WITHSCORES')
  if blocking[2] then
    local at = tonumber(blocking[2])
    local until_ = at + windowMs
    if at > now then
      until_ = now + pollMs
      inFlight = 1
    end
    if until_ > earliest then earliest = until_ end
  end
end
local base = 7 + 3 * nSliding
for j = 1, nBucket do
  local key = KEYS[3 + nSliding + j]
  local limit = tonumber(ARGV[base + 2 * j - 1])
  local endsAt = tonumber(ARGV[base + 2 * j])
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= limit and endsAt > earliest then
    earliest = endsAt
    inFlight = 0
  end
end
if earliest > now then return {0, earliest - now, now, inFlight} end
for i = 1, nSliding do
  local key = KEYS[3 + i]
  redis.call('ZADD', key, now + boundMs, member)
  redis.call('PEXPIRE', key, tonumber(ARGV[7 + 3 * i]))
end
for j = 1, nBucket do
  local key = KEYS[3 + nSliding + j]
  redis.call('INCR', key)
  redis.call('PEXPIREAT', key, tonumber(ARGV[base + 2 * j]) + 60000)
end
return {1, 0, now, 0}
`;

/**
 * The request of `member` settled (its answer or failure came back, or it was never sent): it
 * arrived by now, so each of its entries is rescored to the Redis time of this call, rounded up.
 * Only existing entries of the current epoch change (`XX`): after a state loss the re-seeded copy
 * keeps its in-flight bound (conservative), and an entry pruned or never recorded stays away.
 *
 * KEYS: epoch, then the sorted-set keys the request was recorded under. ARGV: clientEpoch, member.
 * Returns the settle time in ms, or 0 when the epoch is not the client's.
 */
export const SETTLE_SCRIPT = `
local t = redis.call('TIME')
local us = tonumber(t[2])
local now = tonumber(t[1]) * 1000 + math.floor(us / 1000)
if us % 1000 > 0 then now = now + 1 end
local epoch = redis.call('GET', KEYS[1])
if not epoch then return 0 end
local slash = string.find(epoch, '/', 1, true)
if string.sub(epoch, 1, slash - 1) ~= ARGV[1] then return 0 end
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', now, ARGV[2])
end
return now
`;

/**
 * Re-seeds one worker's own recent starts into a new state generation (after Redis lost its
 * data), so the windows and the day count again include them.
 *
 * KEYS: epoch, seq, then `nSliding` sorted-set keys, then `nBucket` counter keys.
 * ARGV: epochId, nSliding, nBucket, then per sliding key `ttlMs count t1 … tcount` (each `t` the
 * entry's score: settle time, or in-flight bound), then per bucket key `count endsAtMs`. Returns
 * 1, or 0 when the epoch moved on meanwhile.
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
  local ttlMs = tonumber(ARGV[a])
  local count = tonumber(ARGV[a + 1])
  a = a + 2
  for k = 1, count do
    local seq = redis.call('INCR', KEYS[2])
    redis.call('ZADD', key, tonumber(ARGV[a]), ARGV[a] .. '-' .. tostring(seq))
    a = a + 1
  end
  redis.call('PEXPIRE', key, ttlMs)
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
