import { serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the redeliver script (see `message-queue.ts` for the
 * key layout).
 */
export const redeliverLua = `
-- redeliver: replaces a running message's JSON text, takes it out of
-- flight and schedules it after a delay, without acknowledging it.  A keyed
-- message stays the head of its key's pending list, so the key stays held.
-- Only the lease holder may do this: the message must be in flight and its
-- delivery count equal the token.  Returns 1 when the message was updated,
-- 0 when the lease was lost (the message is unchanged).  A redelivery is
-- an outcome: it resets the delivery count (B:reset takes the token, see
-- claim.lua.ts), so the next hand-out counts 1.
-- KEYS[1] = B:delayed
-- KEYS[2] = B:inflight
-- KEYS[3] = B:msg
-- KEYS[4] = B:delivery
-- KEYS[5] = B:reset
-- ARGV[1] = message id
-- ARGV[2] = token (the delivery count of the lease holder's hand-out)
-- ARGV[3] = delay in ms
-- ARGV[4] = the new JSON text
local id = ARGV[1]
if redis.call('HGET', KEYS[4], id) ~= ARGV[2] then return 0 end
if redis.call('ZREM', KEYS[2], id) == 0 then return 0 end
${serverNowMsLua}
local now = serverNowMs()
redis.call('HSET', KEYS[3], id, ARGV[4])
redis.call('HSET', KEYS[5], id, ARGV[2])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), id)
return 1
`;
