/**
 * Lua functions that several queue scripts define the same way, pasted into
 * each script's source (a Redis script cannot import another).  Each one
 * assumes what the comment above it says about the script's keys and locals.
 */

/**
 * `serverNowMs()`: the Redis server's clock in milliseconds, so that every
 * client compares due times and leases against one clock.
 */
export const serverNowMsLua = `local function serverNowMs()
  local clock = redis.call('TIME')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end`;

/**
 * `readyList(id)`: the ready list a message waits in.  A message with a
 * priority other than 0 has an id ending in `:p<priority>` and waits in
 * `B:ready:<priority>`; every other one in `B:ready`.  Needs the local
 * `base` and `KEYS[1]` = `B:ready`.
 */
export const readyListLua = `local function readyList(id)
  local priority = string.match(id, ':p(-?%d+)$')
  if priority then return base .. ':ready:' .. priority end
  return KEYS[1]
end`;

/**
 * `makeReady(id, orderingKey)`: puts a message in line to be claimed.  A
 * keyed one joins its key's pending list and enters its ready list only
 * when it is the list's head.  Returns 1 when the message became ready,
 * else 0.  Needs `readyList()` (see {@link readyListLua}), the local `base`
 * (the queue's key prefix) and `KEYS[1]` = `B:ready`.
 */
export const makeReadyLua = `local function makeReady(id, orderingKey)
  if orderingKey then
    if redis.call('RPUSH', base .. ':pending:' .. orderingKey, id) > 1 then return 0 end
  end
  redis.call('LPUSH', readyList(id), id)
  return 1
end`;
