import { serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the heartbeat script (see `message-queue.ts` for the
 * key layout).
 */
export const heartbeatLua = `
-- heartbeat: extends the leases of messages a listener holds.  Only ids
-- still in flight are touched (XX), so a message whose lease was already
-- reclaimed is not put back in flight.  Returns how many were extended.
-- KEYS[1] = B:inflight
-- ARGV[1] = lease in ms
-- ARGV[2..] = message ids
${serverNowMsLua}
local deadline = serverNowMs() + tonumber(ARGV[1])
local extended = 0
-- One ZADD per 500 ids keeps unpack() well inside Lua's stack limit.
for first = 2, #ARGV, 500 do
  local args = {}
  for i = first, math.min(first + 499, #ARGV) do
    table.insert(args, deadline)
    table.insert(args, ARGV[i])
  end
  extended = extended + redis.call('ZADD', KEYS[1], 'XX', 'CH', unpack(args))
end
return extended
`;
