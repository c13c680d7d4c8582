/**
 * Lua of the shared quota's recovery from a loss of its data (Redis restarted without
 * persistence, flushed, or evicted the keys).
 *
 * Every state generation ("epoch", `id/holdUntil` with `id` the Redis time it was opened) starts
 * with a hold: no start until `holdUntil`. A client that knew the lost generation opens the new one
 * with the full hold (the plan's longest window: by then every lost start has left every window)
 * and names itself as expected. Every worker then re-seeds what it knows it sent (its own starts
 * still in a window, and its view of the day's count) and names the participants it saw active
 * lately (`members`: id → newest start, read every watch). The hold ends early, after a short grace
 * for every live worker to notice, once every expected participant has re-seeded: the windows then
 * hold every start again. A participant that died with the data never re-seeds, so the full hold
 * applies, as it must: nobody else knows what it sent.
 *
 * A client without a generation that finds none opens one without hold, unless Redis started
 * lately (then with the grace: workers of the lost generation may still be about to re-seed).
 */
export const RECOVERY_LUA = `
local HOLD_RECHECK_MS = 100

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function openedAt(id)
  local dot = string.find(id, '.', 1, true)
  return tonumber(string.sub(id, 1, dot - 1)) * 1000 + math.floor(tonumber(string.sub(id, dot + 1)) / 1000)
end

local function currentEpoch(epochKey, expectedKey, reseededKey, clientEpoch, participant, holdMs, graceMs, now)
  local epoch = redis.call('GET', epochKey)
  if epoch then return epoch end
  redis.call('DEL', expectedKey, reseededKey)
  local hold = 0
  if clientEpoch ~= '' then
    hold = holdMs
    redis.call('SADD', expectedKey, participant)
    redis.call('PEXPIRE', expectedKey, 86400000)
  else
    local uptime = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)'))
    if uptime * 1000 < holdMs + 1000 then hold = graceMs end
  end
  local t = redis.call('TIME')
  epoch = t[1] .. '.' .. t[2] .. '/' .. tostring(now + hold)
  redis.call('SET', epochKey, epoch)
  return epoch
end

-- Rolling windows: drops the slots that ended at or before horizon; returns the total left.
local function dropOldSlots(slots, counts, horizon)
  local old = redis.call('ZRANGEBYSCORE', slots, '-inf', horizon)
  for _, slotEnd in ipairs(old) do
    redis.call('HINCRBY', counts, 'total', -tonumber(redis.call('HGET', counts, slotEnd) or '0'))
    redis.call('HDEL', counts, slotEnd)
  end
  if #old > 0 then redis.call('ZREMRANGEBYSCORE', slots, '-inf', horizon) end
  return tonumber(redis.call('HGET', counts, 'total') or '0')
end

-- Rolling windows: counts n more starts at the slot ending at slotEnd.
local function addToSlot(slots, counts, slotEnd, n, ttlMs)
  local field = string.format('%d', slotEnd)
  redis.call('ZADD', slots, slotEnd, field)
  redis.call('HINCRBY', counts, field, n)
  redis.call('HINCRBY', counts, 'total', n)
  redis.call('PEXPIRE', slots, ttlMs)
  redis.call('PEXPIRE', counts, ttlMs)
end

-- A participant's first start in a generation waits until the watch of every other live
-- participant (one that watched within aliveMs) has run since it joined: its join is in members
-- from the first attempt, so once seen, it is in their view of the active participants, and after
-- a loss of the data they expect it to re-seed (if it died meanwhile, the full hold applies).
-- One the generation expects (it had starts in a window when the data was lost) is known to the
-- others already (a second loss within a watch period aside). Returns 0 when it may start, else
-- how long to wait.
local function joinUnseen(membersKey, expectedKey, joinsKey, watchersKey, participant, aliveMs, horizonMs, now)
  local joinedAt = redis.call('HGET', joinsKey, participant)
  if joinedAt == '0' or redis.call('SISMEMBER', expectedKey, participant) == 1 then return 0 end
  if not joinedAt then
    joinedAt = now
    redis.call('HSET', joinsKey, participant, now)
    redis.call('PEXPIRE', joinsKey, horizonMs)
    if not redis.call('HGET', membersKey, participant) then
      redis.call('HSET', membersKey, participant, now)
      redis.call('PEXPIRE', membersKey, horizonMs)
    end
  else
    joinedAt = tonumber(joinedAt)
  end
  local watchers = redis.call('HGETALL', watchersKey)
  for i = 1, #watchers, 2 do
    local watchedAt = tonumber(watchers[i + 1])
    if watchers[i] ~= participant and watchedAt >= now - aliveMs and watchedAt <= joinedAt then
      return HOLD_RECHECK_MS
    end
  end
  redis.call('HSET', joinsKey, participant, 0)
  return 0
end

local function liftHold(epochKey, expectedKey, reseededKey, epoch, graceMs, now)
  local slash = string.find(epoch, '/', 1, true)
  local id = string.sub(epoch, 1, slash - 1)
  local holdUntil = tonumber(string.sub(epoch, slash + 1))
  if holdUntil <= now or now < openedAt(id) + graceMs then return id, holdUntil end
  if #redis.call('SDIFF', expectedKey, reseededKey) > 0 then return id, holdUntil end
  redis.call('SET', epochKey, id .. '/' .. tostring(now))
  return id, now
end
`;

/**
 * A worker's periodic look at the shared state: opens a new generation when the data was lost (so
 * an idle worker re-seeds too), ends a hold that may end, forgets participants whose newest start
 * left every window, and returns the active ones, the day counters and each rolling window's
 * counts summed per `aggregateMs` (what a re-seed needs, small enough to read every time).
 *
 * KEYS: epoch, members, expected, reseeded, watchers (participant → its last watch: a
 * participant's first start waits for every live one's), then `nBucket` day counter keys, then
 * per rolling window its slot set and its count hash.
 * ARGV: clientEpoch (never ''), holdMs, graceMs, participant, horizonMs, nBucket, nRolling, then
 * per rolling window `windowMs aggregateMs`.
 * Returns `{now, epochId, {id, newestStart, …}, {dayCount, …}, {{aggregateEnd, count, …}, …}}`.
 */
export const WATCH_SCRIPT = `${RECOVERY_LUA}
local now = nowMs()
local graceMs = tonumber(ARGV[3])
local epoch = currentEpoch(KEYS[1], KEYS[3], KEYS[4], ARGV[1], ARGV[4], tonumber(ARGV[2]), graceMs, now)
local epochId = liftHold(KEYS[1], KEYS[3], KEYS[4], epoch, graceMs, now)
local horizon = now - tonumber(ARGV[5])
redis.call('HSET', KEYS[5], ARGV[4], now)
redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[5]))
local flat = redis.call('HGETALL', KEYS[2])
local active = {}
for i = 1, #flat, 2 do
  if tonumber(flat[i + 1]) < horizon then
    redis.call('HDEL', KEYS[2], flat[i])
  else
    active[#active + 1] = flat[i]
    active[#active + 1] = flat[i + 1]
  end
end
local nBucket = tonumber(ARGV[6])
local nRolling = tonumber(ARGV[7])
local days = {}
for j = 1, nBucket do days[j] = tonumber(redis.call('GET', KEYS[5 + j]) or '0') end
local rolling = {}
for r = 1, nRolling do
  local slots = KEYS[5 + nBucket + 2 * r - 1]
  local counts = KEYS[5 + nBucket + 2 * r]
  local aggregateMs = tonumber(ARGV[7 + 2 * r])
  dropOldSlots(slots, counts, now - tonumber(ARGV[6 + 2 * r]))
  local pairs_ = redis.call('HGETALL', counts)
  local sums = {}
  local order = {}
  for i = 1, #pairs_, 2 do
    if pairs_[i] ~= 'total' then
      local aggregateEnd = math.ceil(tonumber(pairs_[i]) / aggregateMs) * aggregateMs
      if sums[aggregateEnd] == nil then
        sums[aggregateEnd] = 0
        order[#order + 1] = aggregateEnd
      end
      sums[aggregateEnd] = sums[aggregateEnd] + tonumber(pairs_[i + 1])
    end
  end
  local out = {}
  for _, aggregateEnd in ipairs(order) do
    out[#out + 1] = string.format('%d', aggregateEnd)
    out[#out + 1] = sums[aggregateEnd]
  end
  rolling[r] = out
end
return {now, epochId, active, days, rolling}
`;

/**
 * Re-seeds one worker into a new state generation: its own recent starts, its view of each day's
 * count and of the rolling 24 hours (the counts it last read plus its own starts since; the
 * largest view of a counter wins, the own starts add up; a rolling sum read per aggregate counts at
 * the aggregate's end, later than its starts, never earlier), and the participants it saw active,
 * who must re-seed too before the hold ends.
 *
 * KEYS: epoch, seq, expected, reseeded, members, then `nSliding` sorted-set keys, then `nBucket`
 * counter keys, then their `nBucket` base keys, then per rolling window its slot set, count hash
 * and base hash.
 * ARGV: epochId, participant, graceMs, holdMs, newestStartMs (0: none), membersTtlMs, nSliding,
 * nBucket, nExpected, nRolling, the expected ids, then per sliding key `ttlMs count t1 … tcount`
 * (each `t` the entry's score: settle time, or in-flight bound), then per bucket key
 * `observed ownSince endsAtMs`, then per rolling window `ttlMs nObserved (aggregateEnd count)…
 * nOwn (slotEnd count)…`.
 * Returns 1, or 0 when the epoch moved on meanwhile.
 */
export const RESEED_SCRIPT = `${RECOVERY_LUA}
local now = nowMs()
local epoch = redis.call('GET', KEYS[1])
if not epoch then return 0 end
local slash = string.find(epoch, '/', 1, true)
local id = string.sub(epoch, 1, slash - 1)
if id ~= ARGV[1] then return 0 end
local holdUntil = tonumber(string.sub(epoch, slash + 1))
local participant = ARGV[2]
local graceMs = tonumber(ARGV[3])
local holdMs = tonumber(ARGV[4])
local newestStart = tonumber(ARGV[5])
local nSliding = tonumber(ARGV[7])
local nBucket = tonumber(ARGV[8])
local nExpected = tonumber(ARGV[9])
local nRolling = tonumber(ARGV[10])
local a = 11
local others = 0
for k = 1, nExpected do
  redis.call('SADD', KEYS[3], ARGV[a])
  if ARGV[a] ~= participant then others = others + 1 end
  a = a + 1
end
redis.call('PEXPIRE', KEYS[3], 86400000)
if others > 0 and holdUntil > now and holdUntil < openedAt(id) + holdMs then
  -- Opened by a client that knew nothing of the loss: hold until the others re-seeded too.
  redis.call('SET', KEYS[1], id .. '/' .. tostring(openedAt(id) + holdMs))
end
for i = 1, nSliding do
  local key = KEYS[5 + i]
  local ttlMs = tonumber(ARGV[a])
  local count = tonumber(ARGV[a + 1])
  a = a + 2
  for k = 1, count do
    local seq = redis.call('INCR', KEYS[2])
    redis.call('ZADD', key, tonumber(ARGV[a]), ARGV[a] .. '-' .. tostring(seq))
    a = a + 1
  end
  if count > 0 then redis.call('PEXPIRE', key, ttlMs) end
end
for j = 1, nBucket do
  local key = KEYS[5 + nSliding + j]
  local baseKey = KEYS[5 + nSliding + nBucket + j]
  local observed = tonumber(ARGV[a])
  local add = tonumber(ARGV[a + 1])
  local endsAt = tonumber(ARGV[a + 2])
  a = a + 3
  local base = tonumber(redis.call('GET', baseKey) or '0')
  if observed > base then
    add = add + observed - base
    redis.call('SET', baseKey, observed)
  end
  redis.call('INCRBY', key, add)
  redis.call('PEXPIREAT', key, endsAt + 60000)
  redis.call('PEXPIREAT', baseKey, endsAt + 60000)
end
local rollingKey = 5 + nSliding + 2 * nBucket
for r = 1, nRolling do
  local slots = KEYS[rollingKey + 3 * r - 2]
  local counts = KEYS[rollingKey + 3 * r - 1]
  local baseKey = KEYS[rollingKey + 3 * r]
  local ttlMs = tonumber(ARGV[a])
  local nObserved = tonumber(ARGV[a + 1])
  a = a + 2
  for k = 1, nObserved do
    local aggregateEnd = ARGV[a]
    local observed = tonumber(ARGV[a + 1])
    a = a + 2
    local base = tonumber(redis.call('HGET', baseKey, aggregateEnd) or '0')
    if observed > base then
      addToSlot(slots, counts, tonumber(aggregateEnd), observed - base, ttlMs)
      redis.call('HSET', baseKey, aggregateEnd, observed)
    end
  end
  redis.call('PEXPIRE', baseKey, ttlMs)
  local nOwn = tonumber(ARGV[a])
  a = a + 1
  for k = 1, nOwn do
    addToSlot(slots, counts, tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ttlMs)
    a = a + 2
  end
end
redis.call('SADD', KEYS[4], participant)
redis.call('PEXPIRE', KEYS[4], 86400000)
if newestStart > 0 then
  redis.call('HSET', KEYS[5], participant, newestStart)
  redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[6]))
end
liftHold(KEYS[1], KEYS[3], KEYS[4], redis.call('GET', KEYS[1]), graceMs, now)
return 1
`;
