import { serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the depth script (see `message-queue.ts` for the key
 * layout).
 */
export const depthLua = `
-- depth: counts messages.  Returns { queued, delayed, inflight } where
-- delayed messages already due and leases already run out are not counted
-- as delayed or in flight.
-- KEYS[1] = B:msg
-- KEYS[2] = B:delayed
-- KEYS[3] = B:inflight
${serverNowMsLua}
local now = serverNowMs()
local queued = redis.call('HLEN', KEYS[1])
local delayed = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local inflight = redis.call('ZCOUNT', KEYS[3], now, '+inf')
return { queued, delayed, inflight }
`;
