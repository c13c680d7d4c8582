/**
 * Lua of the shared quota's waiting lists: fair sharing of the token's windows among workers.
 *
 * Without them a window's free start goes to whichever worker asks first, so a worker whose retry
 * timer fires later than the others' (a slower event loop, a slower round trip to Redis) can lose
 * every race, indefinitely. With them:
 *
 * - A waiter is one participant waiting for one set of windows (one endpoint): `participant/sig`.
 *   Refused for the first time, it draws a ticket (`INCR` of the token's `seq`), kept in
 *   `tickets` (waiter → ticket) until it is granted a start or lapses.
 * - Every window of the plan's rules (a settle-anchored sliding window; pacing windows, a rule's
 *   spacing and the recovery pace after a 429, stay first come, first served: they are a few
 *   tens of ms, and a worker's own spacing would make it late for its turn on them) that refused
 *   it (full, or its free starts promised to waiters ahead)
 *   puts it on that window's waiting list (`<rule key>:queue`, waiter → ticket), where it stays
 *   until granted (a window that once refused it keeps its place, so it cannot be passed while it
 *   waits for another window).
 * - A start of a window with `room` free starts goes to a waiter only when fewer than `room` live
 *   waiters of OTHER participants with an earlier ticket (or any, when it has none) are on that
 *   window's list and due back within the window's length: each of those holds one of the free
 *   starts (one due back later, because another window blocks it, holds none yet: a start granted
 *   now will have left this window by then). The waiters of one participant do not hold starts
 *   from each other: in-process order is that scheduler's (live first, round robin across
 *   sources). One refused because the free starts are held asks again when the first holder is due
 *   back or the window frees its next start, whichever comes first.
 * - A waiter is live while it comes back: each refusal tells it when to ask again and stamps its
 *   deadline (`waiters`, waiter → that instant plus `graceMs`). One that does not come back in time
 *   (its worker died, stopped, or no longer wants the start) lapses and loses its place, so a dead
 *   waiter holds a start for at most its retry wait plus `graceMs`.
 *
 * So the free starts of a window go to its waiters in ticket order, and the rule is still checked
 * and recorded atomically in the acquire script: the waiting lists only refuse more, never allow
 * more. The guarantee: while a waiter is live and due back within the window's length, no start
 * of that window goes to another participant's request with a later ticket (or none), so it is
 * passed there only by the waiters ahead of it, one start each: at most (participants - 1) ×
 * (endpoints sharing the window) starts, the order of a FIFO. While another, longer window keeps
 * it away, later ones may use this window meanwhile (their starts leave it before it is back, or
 * it waits for them once more, holding its place). Waiting lists are refusals only: with none
 * live (a lone worker, or nobody waiting), the script allows exactly what it did without them.
 */
export const QUEUE_LUA = `
-- Drops the waiters whose deadline passed, and their tickets.
local function dropLapsed(ticketsKey, waitersKey, now)
  local lapsed = redis.call('ZRANGEBYSCORE', waitersKey, '-inf', now - 1)
  for _, w in ipairs(lapsed) do redis.call('HDEL', ticketsKey, w) end
  if #lapsed > 0 then redis.call('ZREMRANGEBYSCORE', waitersKey, '-inf', now - 1) end
end

-- Live waiters of other participants ahead of ticket (0 = none yet: all are ahead) on queueKey
-- that are due back within horizon (a start granted now has left the window by the time a later
-- one is back), dropping lapsed ones; and the soonest instant one of them is due back.
local function waitersAhead(queueKey, waitersKey, participant, ticket, graceMs, horizon)
  local ahead, soonest = 0, nil
  local own = participant .. '/'
  local entries = redis.call('ZRANGE', queueKey, 0, -1, 'WITHSCORES')
  for k = 1, #entries, 2 do
    local w, t = entries[k], tonumber(entries[k + 1])
    if ticket > 0 and t >= ticket then break end
    local due = redis.call('ZSCORE', waitersKey, w)
    if not due then
      redis.call('ZREM', queueKey, w)
    elseif string.sub(w, 1, #own) ~= own then
      local back = tonumber(due) - graceMs
      if back <= horizon then
        ahead = ahead + 1
        if soonest == nil or back < soonest then soonest = back end
      end
    end
  end
  return ahead, soonest
end

-- The waiter's ticket; 0 when it has none (never refused, granted since, or lapsed: then its old
-- places on the lists of queueKeys are dropped).
local function ticketOf(ticketsKey, waitersKey, queueKeys, waiter, now)
  dropLapsed(ticketsKey, waitersKey, now)
  local ticket = redis.call('HGET', ticketsKey, waiter)
  if ticket then return tonumber(ticket) end
  for _, q in ipairs(queueKeys) do redis.call('ZREM', q, waiter) end
  return 0
end

-- Refused: keeps (or draws) the waiter's ticket, puts it on the lists of the windows that refused
-- it, and stamps when it must be back (waitMs from now, plus graceMs).
local function keepWaiting(seqKey, ticketsKey, waitersKey, waiter, ticket, refusedBy, waitMs, graceMs, ttlMs, now)
  if ticket == 0 then
    ticket = redis.call('INCR', seqKey)
    redis.call('HSET', ticketsKey, waiter, ticket)
  end
  for _, q in ipairs(refusedBy) do
    redis.call('ZADD', q, ticket, waiter)
    redis.call('PEXPIRE', q, ttlMs)
  end
  redis.call('ZADD', waitersKey, now + waitMs + graceMs, waiter)
  redis.call('PEXPIRE', waitersKey, ttlMs)
  redis.call('PEXPIRE', ticketsKey, ttlMs)
end

-- Granted: the waiter leaves every list.
local function stopWaiting(ticketsKey, waitersKey, queueKeys, waiter)
  if redis.call('HDEL', ticketsKey, waiter) == 0 then return end
  redis.call('ZREM', waitersKey, waiter)
  for _, q in ipairs(queueKeys) do redis.call('ZREM', q, waiter) end
end
`;
