/**
 * Lua scripts of cluster membership. Liveness is judged on the Redis server's clock.
 *
 * Keys of a group `g` in token namespace `ns`: `ns:group:<g>:members` (sorted set: worker id →
 * last heartbeat, server ms) and `ns:group:<g>:owners` (hash: item → worker id that holds it).
 */

/**
 * One heartbeat: drops members silent for `ttlMs`, records (or, when leaving, removes) this
 * worker, and returns `[now, member, stamp, member, stamp…]` (each live member with its last
 * heartbeat, server ms). KEYS: members. ARGV: workerId, ttlMs, leaving ('1'/'0').
 */
export const HEARTBEAT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now, ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ttl * 20)
local out = { tostring(now) }
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')) do out[#out + 1] = m end
return out
`;

/**
 * Claims items for this worker: an item is taken when nobody holds it, this worker holds it, or
 * its holder's heartbeat is older than `ttlMs` (dead). Nothing is claimed when this worker is not
 * live itself. KEYS: members, owners. ARGV: workerId, ttlMs, item…. Returns the claimed items.
 */
export const CLAIM_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me = ARGV[1]
local ttl = tonumber(ARGV[2])
local mine = redis.call('ZSCORE', KEYS[1], me)
if (not mine) or tonumber(mine) <= now - ttl then return {} end
local claimed = {}
for i = 3, #ARGV do
  local item = ARGV[i]
  local owner = redis.call('HGET', KEYS[2], item)
  local free = (not owner) or owner == me
  if not free then
    local seen = redis.call('ZSCORE', KEYS[1], owner)
    free = (not seen) or tonumber(seen) <= now - ttl
  end
  if free then
    redis.call('HSET', KEYS[2], item, me)
    claimed[#claimed + 1] = item
  end
end
return claimed
`;

/** Gives up items this worker holds. KEYS: owners. ARGV: workerId, item…. Returns how many. */
export const RELEASE_SCRIPT = `
local n = 0
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
`;
