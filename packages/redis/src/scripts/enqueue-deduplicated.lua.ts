import { makeReadyLua, readyListLua, serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the deduplicated enqueue script (see `message-queue.ts`
 * for the key layout).
 */
export const enqueueDeduplicatedLua = `
-- enqueueDeduplicated: adds one message unless its deduplication key is
-- held: by a message still in B:msg (waiting, running or handed back) and
-- enqueued less than the key's TTL ago (B:dedup:K expires then).  Returns 1
-- when the message was added, 0 when the key was held.
-- KEYS[1] = B:ready
-- KEYS[2] = B:delayed
-- KEYS[3] = B:msg
-- KEYS[4] = B:okey
-- KEYS[5] = B:seq
-- ARGV[1] = B, the base name of the queue's keys
-- ARGV[2] = delay in ms (0: ready now)
-- ARGV[3] = ordering key ("" for none)
-- ARGV[4] = deduplication key K
-- ARGV[5] = TTL of the deduplication key in ms
-- ARGV[6] = the JSON text
-- ARGV[7] = priority (an integer from -5 to 5, checked by the caller)
-- ARGV[8] = what to publish on B:wake (the enqueuing process's origin)
local base = ARGV[1]
local delay = tonumber(ARGV[2])
local orderingKey = ARGV[3]
if orderingKey == '' then orderingKey = nil end
local dedupKey = base .. ':dedup:' .. ARGV[4]
${readyListLua}
${makeReadyLua}
${serverNowMsLua}
local holder = redis.call('GET', dedupKey)
if holder and redis.call('HEXISTS', KEYS[3], holder) == 1 then return 0 end
local id = string.format('%015d', redis.call('INCR', KEYS[5]))
if ARGV[7] ~= '0' then id = id .. ':p' .. ARGV[7] end
redis.call('HSET', KEYS[3], id, ARGV[6])
if orderingKey then redis.call('HSET', KEYS[4], id, orderingKey) end
redis.call('SET', dedupKey, id, 'PX', tonumber(ARGV[5]))
if delay > 0 then
  redis.call('ZADD', KEYS[2], serverNowMs() + delay, id)
elseif makeReady(id, orderingKey) > 0 then
  redis.call('PUBLISH', base .. ':wake', ARGV[8])
end
return 1
`;
