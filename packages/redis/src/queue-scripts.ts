// The Lua scripts behind RedisMessageQueue.  Every state change is one
// script call, so a change is atomic and costs one round trip.
//
// Keys of one queue, all sharing the hash tag `{<prefix>:<queue>}` (below
// written `B`) so that they live in one cluster slot:
//   B:seq       counter for message ids
//   B:msg       hash   id -> message JSON (a message exists while it is here)
//   B:okey      hash   id -> ordering key (keyed messages only)
//   B:ready     list   ids a worker may take; pushed on the left, popped on
//                      the right, so the right end is the front of the line
//   B:delayed   zset   id -> due time (ms, server clock)
//   B:inflight  zset   id -> lease deadline (ms, server clock)
//   B:delivery  hash   id -> how many times it was handed out; the number
//                      of the current hand-out is the lease holder's token
//   B:pending:K list   ready ids of ordering key K, oldest first; only its
//                      head is ever in B:ready or B:inflight, which is what
//                      keeps same-key messages one at a time and in order;
//                      a message handed back (its handler threw, or asked
//                      for a redelivery) stays its key's head while it
//                      waits in B:delayed, which keeps the key held
//   B:wake      pub/sub channel told how many ids were made ready
//   B:dedup:K   string id of the message that holds deduplication key K,
//                      expiring after the key's TTL; the key is held only
//                      while that id is still in B:msg (not acknowledged)
// Pending lists are built from the base name inside the scripts; they share
// the hash tag, so in a cluster they are in the same slot as the declared
// keys.
//
// Ids are zero-padded so that delayed messages with the same due time sort
// by id (enqueue order) in the zset.
import { LuaScript } from "./lua-script.ts";

/** The names of the keys of one queue. */
export interface QueueKeys {
  readonly base: string;
  readonly seq: string;
  readonly msg: string;
  readonly okey: string;
  readonly ready: string;
  readonly delayed: string;
  readonly inflight: string;
  readonly delivery: string;
  readonly wake: string;
}

/**
 * Returns the key names of the queue `queue` under `prefix`.
 * @param prefix The key prefix, e.g. `"fedwork"`.
 * @param queue The queue name.
 */
export function queueKeys(prefix: string, queue: string): QueueKeys {
  const base = `{${prefix}:${queue}}`;
  return {
    base,
    seq: `${base}:seq`,
    msg: `${base}:msg`,
    okey: `${base}:okey`,
    ready: `${base}:ready`,
    delayed: `${base}:delayed`,
    inflight: `${base}:inflight`,
    delivery: `${base}:delivery`,
    wake: `${base}:wake`,
  };
}

const NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

// Makes a message ready: a keyed one joins its key's pending list and only
// enters B:ready when it is the list's head.  Returns 1 when it entered
// B:ready.
const MAKE_READY = `
local function makeReady(id, orderingKey)
  if orderingKey then
    if redis.call('RPUSH', base .. ':pending:' .. orderingKey, id) > 1 then return 0 end
  end
  redis.call('LPUSH', KEYS[1], id)
  return 1
end
`;

/**
 * Adds messages.  KEYS: ready, delayed, msg, okey, seq.  ARGV: base,
 * delay (ms), ordering key ("" for none), then one JSON text per message.
 * Returns the number of messages added.
 */
export const enqueueScript = new LuaScript(
  `
local base = ARGV[1]
local delay = tonumber(ARGV[2])
local orderingKey = ARGV[3]
if orderingKey == '' then orderingKey = nil end
${MAKE_READY}
local count = #ARGV - 3
local last = redis.call('INCRBY', KEYS[5], count)
local due = 0
if delay > 0 then
  ${NOW}
  due = now + delay
end
local readied = 0
for i = 1, count do
  local id = string.format('%015d', last - count + i)
  redis.call('HSET', KEYS[3], id, ARGV[i + 3])
  if orderingKey then redis.call('HSET', KEYS[4], id, orderingKey) end
  if delay > 0 then
    redis.call('ZADD', KEYS[2], due, id)
  else
    readied = readied + makeReady(id, orderingKey)
  end
end
if readied > 0 then redis.call('PUBLISH', base .. ':wake', readied) end
return count
`,
  5,
);

/**
 * Adds one message unless its deduplication key is held: by a message that
 * is still in B:msg (waiting, running or handed back) and enqueued less
 * than the key's TTL ago (the B:dedup:K key expires then).  KEYS: ready,
 * delayed, msg, okey, seq.  ARGV: base, delay (ms), ordering key ("" for
 * none), deduplication key, TTL (ms), the JSON text.  Returns 1 when the
 * message was added, 0 when the key was held.
 */
export const enqueueDeduplicatedScript = new LuaScript(
  `
local base = ARGV[1]
local delay = tonumber(ARGV[2])
local orderingKey = ARGV[3]
if orderingKey == '' then orderingKey = nil end
local dedupKey = base .. ':dedup:' .. ARGV[4]
${MAKE_READY}
local holder = redis.call('GET', dedupKey)
if holder and redis.call('HEXISTS', KEYS[3], holder) == 1 then return 0 end
local id = string.format('%015d', redis.call('INCR', KEYS[5]))
redis.call('HSET', KEYS[3], id, ARGV[6])
if orderingKey then redis.call('HSET', KEYS[4], id, orderingKey) end
redis.call('SET', dedupKey, id, 'PX', tonumber(ARGV[5]))
if delay > 0 then
  ${NOW}
  redis.call('ZADD', KEYS[2], now + delay, id)
elseif makeReady(id, orderingKey) > 0 then
  redis.call('PUBLISH', base .. ':wake', 1)
end
return 1
`,
  5,
);

// Makes due delayed messages ready.  A message handed back while it was
// the head of its key's pending list is still that head: it enters B:ready
// again without joining the list a second time.
const PROMOTE_DUE = `
local function promoteDue()
  local promoted = 0
  local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
  for _, id in ipairs(due) do
    redis.call('ZREM', KEYS[2], id)
    local orderingKey = redis.call('HGET', KEYS[5], id)
    if orderingKey and redis.call('LINDEX', base .. ':pending:' .. orderingKey, 0) == id then
      redis.call('LPUSH', KEYS[1], id)
      promoted = promoted + 1
    else
      promoted = promoted + makeReady(id, orderingKey)
    end
  end
  return promoted
end
`;

/**
 * Acknowledges finished messages, hands back those whose handlers threw,
 * then hands out up to `count` ready ones.  Before handing out, moves due
 * delayed messages to ready and puts messages whose lease ran out back at
 * the front of the line.
 *
 * A handed-back message goes to B:delayed, due after the redelivery delay,
 * and keeps its ordering key held; only the lease holder (the token the
 * claim returned) can hand a message back.
 *
 * KEYS: ready, delayed, inflight, msg, okey, delivery.  ARGV: base, lease
 * (ms), count, redelivery delay (ms), the number N of messages to hand
 * back, then N pairs of id and token, then the ids to acknowledge.
 *
 * Returns `{ wait, readyLeft, id1, json1, token1, id2, json2, token2, ... }`
 * where `wait` is how many ms until the next delayed message is due or
 * lease runs out (-1 when neither exists) and `readyLeft` the length of
 * B:ready after taking.
 */
export const claimScript = new LuaScript(
  `
local base = ARGV[1]
local lease = tonumber(ARGV[2])
local count = tonumber(ARGV[3])
local redeliveryDelay = tonumber(ARGV[4])
local handBackCount = tonumber(ARGV[5])
local firstAck = 6 + 2 * handBackCount
${NOW}
${MAKE_READY}
${PROMOTE_DUE}
local readied = 0
for i = firstAck, #ARGV do
  local id = ARGV[i]
  redis.call('ZREM', KEYS[3], id)
  -- Acknowledging twice (after a lease was lost) must not advance a
  -- pending list twice: only the call that deletes the message does.
  if redis.call('HDEL', KEYS[4], id) == 1 then
    redis.call('HDEL', KEYS[6], id)
    local orderingKey = redis.call('HGET', KEYS[5], id)
    if orderingKey then
      redis.call('HDEL', KEYS[5], id)
      local pending = base .. ':pending:' .. orderingKey
      if redis.call('LINDEX', pending, 0) == id then
        redis.call('LPOP', pending)
        local nextId = redis.call('LINDEX', pending, 0)
        if nextId then
          redis.call('LPUSH', KEYS[1], nextId)
          readied = readied + 1
        end
      else
        redis.call('LREM', pending, 1, id)
      end
    end
  end
end
for i = 6, firstAck - 1, 2 do
  local id = ARGV[i]
  -- A lease that ran out (and maybe went to another worker) is not ours to
  -- hand back: the message is already on its way again.
  if redis.call('HGET', KEYS[6], id) == ARGV[i + 1] and redis.call('ZREM', KEYS[3], id) == 1 then
    redis.call('ZADD', KEYS[2], now + redeliveryDelay, id)
  end
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1000)
for i = #expired, 1, -1 do
  redis.call('ZREM', KEYS[3], expired[i])
  -- Pushed on the right: a message whose worker died goes first.
  redis.call('RPUSH', KEYS[1], expired[i])
  readied = readied + 1
end
readied = readied + promoteDue()
local result = { -1, 0 }
if count > 0 then
  local ids = redis.call('RPOP', KEYS[1], count)
  if ids then
    for _, id in ipairs(ids) do
      local json = redis.call('HGET', KEYS[4], id)
      -- An id without a message was acknowledged after its lease had been
      -- reclaimed; drop the stale copy.
      if json then
        redis.call('ZADD', KEYS[3], now + lease, id)
        table.insert(result, id)
        table.insert(result, json)
        table.insert(result, redis.call('HINCRBY', KEYS[6], id, 1))
      end
    end
  end
end
local readyLeft = redis.call('LLEN', KEYS[1])
result[2] = readyLeft
if readied > 0 and readyLeft > 0 then redis.call('PUBLISH', base .. ':wake', readyLeft) end
local nextAt = nil
local firstDelayed = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if firstDelayed[2] then nextAt = tonumber(firstDelayed[2]) end
local firstLease = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if firstLease[2] and (nextAt == nil or tonumber(firstLease[2]) < nextAt) then
  nextAt = tonumber(firstLease[2])
end
if nextAt then result[1] = math.max(nextAt - now, 0) end
return result
`,
  6,
);

/**
 * Redelivers a message in place: replaces its JSON text, takes it out of
 * flight and schedules it after a delay, without acknowledging it.  A keyed
 * message stays the head of its key's pending list, so the key stays held
 * until it is finally acknowledged.  Only the lease holder may do this: the
 * message must be in flight and its delivery count equal the token.
 *
 * KEYS: delayed, inflight, msg, delivery.  ARGV: id, token, delay (ms),
 * the new JSON text.  Returns 1 when the message was updated, 0 when the
 * lease was lost (the message is unchanged).
 */
export const redeliverScript = new LuaScript(
  `
local id = ARGV[1]
if redis.call('HGET', KEYS[4], id) ~= ARGV[2] then return 0 end
if redis.call('ZREM', KEYS[2], id) == 0 then return 0 end
${NOW}
redis.call('HSET', KEYS[3], id, ARGV[4])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), id)
return 1
`,
  4,
);

/**
 * Extends the leases of running messages.  KEYS: inflight.  ARGV: lease
 * (ms), then the ids.  Only ids still in flight are touched (`XX`), so a
 * message whose lease was already reclaimed is not put back in flight.
 */
export const heartbeatScript = new LuaScript(
  `
local lease = tonumber(ARGV[1])
${NOW}
local extended = 0
for i = 2, #ARGV do
  extended = extended + redis.call('ZADD', KEYS[1], 'XX', 'CH', now + lease, ARGV[i])
end
return extended
`,
  1,
);

/**
 * Counts messages.  KEYS: msg, delayed, inflight.  Returns
 * `{ queued, delayed, inflight }` where delayed messages already due and
 * leases already run out are not counted as delayed or in flight.
 */
export const depthScript = new LuaScript(
  `
${NOW}
local queued = redis.call('HLEN', KEYS[1])
local delayed = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local inflight = redis.call('ZCOUNT', KEYS[3], now, '+inf')
return { queued, delayed, inflight }
`,
  3,
);
