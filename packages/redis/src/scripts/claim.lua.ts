import { readyListLua, serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the claim script (see `message-queue.ts` for the key
 * layout).
 */
export const claimLua = `
-- claim: acknowledges finished messages, hands back those whose handlers
-- threw, releases prefetched ones a stopping listener never started, then
-- hands out up to count ready ones.  Before handing out, puts messages
-- whose lease ran out back at the front of the line and moves due delayed
-- messages to ready; each of these scans runs only when the head of its
-- sorted set says it can find something.
--
-- A handed-back message goes to B:delayed, due after the redelivery delay;
-- a released one goes back to the front of B:ready.  Either keeps its
-- ordering key held (it stays the head of its key's pending list), and
-- only the lease holder (the token the claim returned) can do either.
--
-- The listener says which acknowledged messages have an ordering key (the
-- claim told it): unkeyed ones are deleted with one command per batch.
-- Acknowledgements carry the token too: a listener whose lease ran out
-- must not delete a message another worker has since been handed (which
-- would lose it if that worker then died).
--
-- Delivery counts: B:delivery counts every hand-out (it is the lease
-- token, so it never goes down); B:reset holds its value at the message's
-- last redelivery (an outcome), so that B:delivery - B:reset is how many
-- times the message was handed out since, this hand-out included.  A
-- release adds 1 to B:reset: the released hand-out does not count.  A
-- lease that ran out (its worker died, maybe killed by the message) keeps
-- its count.  The first claim that finds no B:reset writes one below its
-- token: 0 for a new message, and for a message stored before counts
-- existed (whose B:delivery also counts hand-outs before its earlier
-- redeliveries) a count that starts at 1.
--
-- Returns { wait, more, id1, json1, token1, keyed1, count1, ... }: wait is
-- how many ms until the next delayed message is due or a lease runs out
-- (-1 when neither exists), more is 1 when B:ready may hold more messages
-- (count were taken), keyedN is 1 when message N has an ordering key,
-- countN its delivery count.
-- KEYS[1] = B:ready
-- KEYS[2] = B:delayed
-- KEYS[3] = B:inflight
-- KEYS[4] = B:msg
-- KEYS[5] = B:okey
-- KEYS[6] = B:delivery
-- KEYS[7] = B:reset
-- ARGV[1] = B, the base name of the queue's keys
-- ARGV[2] = lease in ms
-- ARGV[3] = count, how many messages to hand out at most (up to 1000)
-- ARGV[4] = redelivery delay in ms
-- ARGV[5] = H, the number of messages to hand back
-- ARGV[6] = R, the number of messages to release
-- ARGV[7] = U, the number of unkeyed messages to acknowledge
-- ARGV[8 ..] = H pairs of id and token to hand back, then R pairs of id
--              and token to release (front of the line first), then U
--              pairs of id and token of unkeyed messages to acknowledge,
--              then the pairs of keyed messages to acknowledge
--
-- Priorities: a message enqueued with a priority other than 0 has an id
-- ending in ':p<priority>' and waits in B:ready:<priority> instead of
-- B:ready (readyList() picks the list from the id alone); the hand-out
-- pops from the lists highest priority first.  A keyed message only enters
-- a ready list as its key's head, so a key's messages keep their order
-- whatever their priorities.
local base = ARGV[1]
local lease = tonumber(ARGV[2])
local count = math.min(tonumber(ARGV[3]), 1000)
local redeliveryDelay = tonumber(ARGV[4])
local firstRelease = 8 + 2 * tonumber(ARGV[5])
local firstUnkeyed = firstRelease + 2 * tonumber(ARGV[6])
local firstKeyed = firstUnkeyed + 2 * tonumber(ARGV[7])
${serverNowMsLua}
${readyListLua}
local now = serverNowMs()
-- Runs a variadic command over ids[from..to], in chunks small enough for
-- Lua's unpack().
local function batch(command, key, ids, from, to)
  for i = from, to, 1000 do
    redis.call(command, key, unpack(ids, i, math.min(i + 999, to)))
  end
end
local readied = 0

-- Unkeyed acknowledgements: only of the current hand-out (its token is
-- the delivery count), looked up with one HMGET per 1000 messages.
if firstKeyed > firstUnkeyed then
  local owned = {}
  for first = firstUnkeyed, firstKeyed - 1, 2000 do
    local chunk = {}
    for i = first, math.min(first + 1999, firstKeyed - 1), 2 do
      table.insert(chunk, ARGV[i])
    end
    local current = redis.call('HMGET', KEYS[6], unpack(chunk))
    for j, id in ipairs(chunk) do
      if current[j] == ARGV[first + 2 * j - 1] then table.insert(owned, id) end
    end
  end
  if #owned > 0 then
    batch('ZREM', KEYS[3], owned, 1, #owned)
    batch('HDEL', KEYS[4], owned, 1, #owned)
    batch('HDEL', KEYS[6], owned, 1, #owned)
    batch('HDEL', KEYS[7], owned, 1, #owned)
  end
end
-- Keyed acknowledgements advance the key's pending list, but only in the
-- call that deletes the message, and only of the current hand-out.
for i = firstKeyed, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[6], id) == ARGV[i + 1] then
    redis.call('ZREM', KEYS[3], id)
    if redis.call('HDEL', KEYS[4], id) == 1 then
      redis.call('HDEL', KEYS[6], id)
      redis.call('HDEL', KEYS[7], id)
      local orderingKey = redis.call('HGET', KEYS[5], id)
      if orderingKey then
        redis.call('HDEL', KEYS[5], id)
        local pending = base .. ':pending:' .. orderingKey
        if redis.call('LINDEX', pending, 0) == id then
          redis.call('LPOP', pending)
          local nextId = redis.call('LINDEX', pending, 0)
          if nextId then
            redis.call('LPUSH', readyList(nextId), nextId)
            readied = readied + 1
          end
        else
          redis.call('LREM', pending, 1, id)
        end
      end
    end
  end
end
-- A lease that ran out (and maybe went to another worker) is not ours to
-- hand back or release: the message is already on its way again.
for i = 8, firstRelease - 1, 2 do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[6], id) == ARGV[i + 1] and redis.call('ZREM', KEYS[3], id) == 1 then
    redis.call('ZADD', KEYS[2], now + redeliveryDelay, id)
  end
end
-- Released in reverse, each pushed on the right, so that the first one
-- ends up at the front of the line.
for i = firstUnkeyed - 2, firstRelease, -2 do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[6], id) == ARGV[i + 1] and redis.call('ZREM', KEYS[3], id) == 1 then
    redis.call('HINCRBY', KEYS[7], id, 1)
    redis.call('RPUSH', readyList(id), id)
    readied = readied + 1
  end
end

-- Leases that ran out: only when the earliest deadline has passed.
local leaseHead = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
local nextLease = tonumber(leaseHead[2])
if nextLease and nextLease <= now then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1000)
  batch('ZREM', KEYS[3], expired, 1, #expired)
  -- Pushed on the right in reverse: the earliest deadline goes first.
  for i = #expired, 1, -1 do
    redis.call('RPUSH', readyList(expired[i]), expired[i])
  end
  readied = readied + #expired
  leaseHead = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  nextLease = tonumber(leaseHead[2])
end

-- Due delayed messages: only when the earliest due time has passed.  A
-- message handed back while it was the head of its key's pending list is
-- still that head: it enters B:ready again without joining the list twice.
local delayedHead = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local nextDue = tonumber(delayedHead[2])
if nextDue and nextDue <= now then
  local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
  batch('ZREM', KEYS[2], due, 1, #due)
  local keys = redis.call('HMGET', KEYS[5], unpack(due))
  for i, id in ipairs(due) do
    local orderingKey = keys[i]
    if not orderingKey then
      redis.call('LPUSH', readyList(id), id)
      readied = readied + 1
    else
      local pending = base .. ':pending:' .. orderingKey
      if redis.call('LINDEX', pending, 0) == id then
        redis.call('LPUSH', readyList(id), id)
        readied = readied + 1
      elseif redis.call('RPUSH', pending, id) == 1 then
        redis.call('LPUSH', readyList(id), id)
        readied = readied + 1
      end
    end
  end
  delayedHead = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  nextDue = tonumber(delayedHead[2])
end

local result = { -1, 0 }
local taken = 0
if count > 0 then
  -- Highest priority first: 5 down to 1, then B:ready (0), then -1 to -5.
  local ids = {}
  for priority = 5, -5, -1 do
    local list = KEYS[1]
    if priority ~= 0 then list = base .. ':ready:' .. priority end
    local popped = redis.call('RPOP', list, count - #ids)
    if popped then
      for _, id in ipairs(popped) do table.insert(ids, id) end
      if #ids >= count then break end
    end
  end
  if #ids > 0 then
    taken = #ids
    local texts = redis.call('HMGET', KEYS[4], unpack(ids))
    local keys = redis.call('HMGET', KEYS[5], unpack(ids))
    local resets = redis.call('HMGET', KEYS[7], unpack(ids))
    local leased = {}
    for i, id in ipairs(ids) do
      -- An id without a message was acknowledged after its lease had been
      -- reclaimed; drop the stale copy.
      if texts[i] then
        table.insert(leased, now + lease)
        table.insert(leased, id)
        table.insert(result, id)
        table.insert(result, texts[i])
        local token = redis.call('HINCRBY', KEYS[6], id, 1)
        local reset = tonumber(resets[i])
        if not reset then
          reset = token - 1
          redis.call('HSET', KEYS[7], id, reset)
        end
        table.insert(result, token)
        table.insert(result, keys[i] and 1 or 0)
        table.insert(result, token - reset)
      end
    end
    if #leased > 0 then
      redis.call('ZADD', KEYS[3], unpack(leased))
      if not nextLease then nextLease = now + lease end
    end
  end
end
if taken == count and count > 0 then result[2] = 1 end
-- Wake other listeners for what this call made ready and did not take.
if readied > 0 and (count == 0 or taken == count) then
  redis.call('PUBLISH', base .. ':wake', readied)
end
local nextAt = nextDue
if nextLease and (nextAt == nil or nextLease < nextAt) then nextAt = nextLease end
if nextAt then result[1] = math.max(nextAt - now, 0) end
return result
`;
