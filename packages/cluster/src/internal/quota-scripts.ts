import { QUEUE_LUA } from './quota-queue-scripts.js';
import { RECOVERY_LUA } from './quota-recovery-scripts.js';

/**
 * Lua scripts of the shared quota. Every script reads the clock of the Redis server (`TIME`), so
 * workers on several hosts agree on every sliding window whatever their own clocks say.
 *
 * Keys of a token namespace `ns`: `ns:quota:epoch` (id and hold-until of the current state
 * generation), `ns:quota:pause` (shared rate-limit pause, with a TTL), `ns:quota:seq` (unique
 * members), `ns:quota:rule:<id>` (sorted set, one member per request, score = the latest instant it can
 * have arrived, in ms: see {@link ACQUIRE_SCRIPT}) and
 * `ns:quota:day:<start ms>` (the day's counter, expiring after the day's reset),
 * `ns:quota:rolling-day` and `ns:quota:rolling-day:n` (the rolling 24 hours: slot ends, and counts
 * per slot plus `total`); for recovering from a loss of the data: `ns:quota:members` (participant →
 * newest start, or join), `ns:quota:expected` and `ns:quota:reseeded` (participants),
 * `ns:quota:joins` (participant → when it first asked, 0 once every live participant saw it),
 * `ns:quota:watchers` (participant → its last watch), and the `:base` of each counter (see
 * `quota-recovery-scripts.ts`). The windows themselves come from core's
 * `PlanWindows`, as `PlanScheduler`'s do.
 */

/**
 * Atomic check-and-record of one request start across every rule.
 *
 * A sorted set holds one member per request. A start-anchored window (`anchor` 0: pacing, where
 * jitter cannot cause a refusal) scores it with the start. A settle-anchored one (`anchor` 1: the
 * plan's rules) scores it with the latest instant the request can have arrived at the service: while it is in flight, its start plus `boundMs` (the longest it can take
 * to arrive: see `RedisWindowStore`), a score in the future; once settled ({@link SETTLE_SCRIPT}), the
 * Redis time of the settle. So an entry scored after `now` is in flight and blocks as if it were
 * arriving "now" (answered with a wait of at most `pollMs`: the settle of another worker is not
 * announced, it is polled for); an entry whose bound has passed without a settle (its worker died
 * mid-request) counts at its bound, like a request that arrived as late as it possibly could.
 * A recorded start also marks its participant active (`members`: id → newest start), so after a
 * loss of the data every worker knows whose starts must be re-seeded (see {@link RECOVERY_LUA}).
 *
 * The rolling 24 hours keep one counter per slot (`slotMs`): a sorted set of slot ends and a hash
 * of their counts plus `total`; a start counts at the end of its slot (later, never earlier).
 *
 * A participant's first start waits until every other live participant's watch has seen it
 * (see `joinUnseen` in {@link RECOVERY_LUA}).
 *
 * With a waiter (see {@link QUEUE_LUA}), a window's free starts go to its waiting list in ticket
 * order: a start is also refused while the live waiters of other participants ahead of this one
 * hold every free start of one of its windows, and a refusal puts this one on the lists.
 *
 * KEYS: epoch, pause, seq, members, expected, reseeded, joins, watchers, then `nSliding`
 * sorted-set keys, then `nBucket` counter keys, then per rolling window its slot set and its count
 * hash; with a waiter, then `tickets`, `waiters` and the waiting list of each sliding key.
 * ARGV: clientEpoch ('' when the client has none yet), holdMs, nSliding, nBucket, member (unique
 * per request), boundMs, pollMs, participant, graceMs, horizonMs, nRolling, watcherAliveMs, then per sliding key
 * `windowMs limit ttlMs anchor`, then per bucket key `limit endsAtMs`, then per rolling window
 * `windowMs limit slotMs`; then, optionally, `waiter queueGraceMs` (`participant/<endpoint's
 * windows>`; without it, or with '', no waiting list: first come, first served).
 *
 * Returns `{1, 0, now, 0}` when recorded, `{0, waitMs, now, inFlight}` when a rule, the pause, a
 * waiting list or the hold after a state loss blocks (`inFlight` 1 when a request in flight is what blocks), and
 * `{-1, epochId, now, 0}` when the client's epoch is not the current one (it must re-seed its own
 * recent requests first, then retry).
 */
export const ACQUIRE_SCRIPT = `${RECOVERY_LUA}
${QUEUE_LUA}
local now = nowMs()
local clientEpoch = ARGV[1]
local participant = ARGV[8]
local graceMs = tonumber(ARGV[9])
local epoch = currentEpoch(KEYS[1], KEYS[5], KEYS[6], clientEpoch, participant, tonumber(ARGV[2]), graceMs, now)
local epochId, holdUntil = liftHold(KEYS[1], KEYS[5], KEYS[6], epoch, graceMs, now)
if epochId ~= clientEpoch then return {-1, epochId, now, 0} end
if holdUntil > now then return {0, math.min(holdUntil - now, HOLD_RECHECK_MS), now, 0} end
local nSliding = tonumber(ARGV[3])
local nBucket = tonumber(ARGV[4])
local nRolling = tonumber(ARGV[11])
local member = ARGV[5]
local boundMs = tonumber(ARGV[6])
local pollMs = tonumber(ARGV[7])
local horizonMs = tonumber(ARGV[10])
local slidingKey = 8
local bucketKey = slidingKey + nSliding
local rollingKey = bucketKey + nBucket
local slidingArg = 12
local bucketArg = slidingArg + 4 * nSliding
local rollingArg = bucketArg + 2 * nBucket
local queueArg = rollingArg + 3 * nRolling
local queueKey = rollingKey + 2 * nRolling
local waiter = ARGV[queueArg + 1]
local queued = waiter ~= nil and waiter ~= ''
local queueGraceMs, ticketsKey, waitersKey = 0, KEYS[queueKey + 1], KEYS[queueKey + 2]
local queueKeys = {}
if queued then
  queueGraceMs = tonumber(ARGV[queueArg + 2])
  for i = 1, nSliding do queueKeys[i] = KEYS[queueKey + 2 + i] end
end
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then
  -- Everyone waits: a waiter keeps its place through the pause.
  if queued then redis.call('ZADD', waitersKey, 'XX', now + pause + queueGraceMs, waiter) end
  return {0, pause, now, 0}
end
local unseen = joinUnseen(KEYS[4], KEYS[5], KEYS[7], KEYS[8], participant, tonumber(ARGV[12]), horizonMs, now)
if unseen > 0 then return {0, unseen, now, 0} end
local earliest = now
local inFlight = 0
local rooms = {}
for i = 1, nSliding do
  local key = KEYS[slidingKey + i]
  local windowMs = tonumber(ARGV[slidingArg + 4 * i - 3])
  local limit = tonumber(ARGV[slidingArg + 4 * i - 2])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  rooms[i] = limit - redis.call('ZCARD', key)
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
for j = 1, nBucket do
  local key = KEYS[bucketKey + j]
  local limit = tonumber(ARGV[bucketArg + 2 * j - 1])
  local endsAt = tonumber(ARGV[bucketArg + 2 * j])
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= limit and endsAt > earliest then
    earliest = endsAt
    inFlight = 0
  end
end
for r = 1, nRolling do
  local slots = KEYS[rollingKey + 2 * r - 1]
  local counts = KEYS[rollingKey + 2 * r]
  local windowMs = tonumber(ARGV[rollingArg + 3 * r - 2])
  local limit = tonumber(ARGV[rollingArg + 3 * r - 1])
  local slotMs = tonumber(ARGV[rollingArg + 3 * r])
  local total = dropOldSlots(slots, counts, now - windowMs)
  local excess = total + 1 - limit
  if excess > 0 then
    local until_ = math.ceil(now / slotMs) * slotMs + windowMs
    local dropped = 0
    for _, slotEnd in ipairs(redis.call('ZRANGE', slots, 0, -1)) do
      dropped = dropped + tonumber(redis.call('HGET', counts, slotEnd) or '0')
      if dropped >= excess then
        until_ = tonumber(slotEnd) + windowMs
        break
      end
    end
    if until_ > earliest then
      earliest = until_
      inFlight = 0
    end
  end
end
local ticket, refusedBy = 0, {}
if queued then
  ticket = ticketOf(ticketsKey, waitersKey, queueKeys, waiter, now)
  for i = 1, nSliding do
    if ARGV[slidingArg + 4 * i] ~= '1' then
      -- A pacing window (a rule's spacing, the pause's recovery): first come, first served.
    elseif rooms[i] <= 0 then
      table.insert(refusedBy, queueKeys[i])
    else
      local windowMs = tonumber(ARGV[slidingArg + 4 * i - 3])
      local ahead, soonest = waitersAhead(queueKeys[i], waitersKey, participant, ticket, queueGraceMs, now + windowMs)
      if ahead >= rooms[i] then
        -- The free starts are held for waiters ahead: ask again when the first of them is due
        -- back, or when the window frees another start.
        table.insert(refusedBy, queueKeys[i])
        local oldest = redis.call('ZRANGE', KEYS[slidingKey + i], 0, 0, 'WITHSCORES')
        local freed = now + pollMs
        if oldest[2] and tonumber(oldest[2]) <= now then freed = tonumber(oldest[2]) + windowMs end
        local until_ = math.max(now + pollMs, math.min(soonest, freed))
        if until_ > earliest then earliest = until_ end
      end
    end
  end
end
if earliest > now then
  if queued then
    keepWaiting(KEYS[3], ticketsKey, waitersKey, waiter, ticket, refusedBy, earliest - now, queueGraceMs, horizonMs, now)
  end
  return {0, earliest - now, now, inFlight}
end
if queued then stopWaiting(ticketsKey, waitersKey, queueKeys, waiter) end
for i = 1, nSliding do
  local key = KEYS[slidingKey + i]
  local score = now
  if ARGV[slidingArg + 4 * i] == '1' then score = now + boundMs end
  redis.call('ZADD', key, score, member)
  redis.call('PEXPIRE', key, tonumber(ARGV[slidingArg + 4 * i - 1]))
end
for j = 1, nBucket do
  local key = KEYS[bucketKey + j]
  redis.call('INCR', key)
  redis.call('PEXPIREAT', key, tonumber(ARGV[bucketArg + 2 * j]) + 60000)
end
for r = 1, nRolling do
  local slotMs = tonumber(ARGV[rollingArg + 3 * r])
  addToSlot(KEYS[rollingKey + 2 * r - 1], KEYS[rollingKey + 2 * r], math.ceil(now / slotMs) * slotMs, 1,
    tonumber(ARGV[rollingArg + 3 * r - 2]) + slotMs + 60000)
end
redis.call('HSET', KEYS[4], participant, now)
redis.call('PEXPIRE', KEYS[4], horizonMs)
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
