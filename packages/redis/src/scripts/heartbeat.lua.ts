import { serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the heartbeat script (see `message-queue.ts` for the
 * key layout).
 */
export const heartbeatLua = `
-- heartbeat: extends the leases of messages a listener holds.  Only ids
-- still in flight (XX) and still handed out to this listener (their
-- delivery count equals the token) are touched, so a message whose lease
-- was reclaimed is neither put back in flight nor kept from its new
-- holder's crash recovery.  Returns how many were extended.
-- KEYS[1] = B:inflight
-- KEYS[2] = B:delivery
-- ARGV[1] = lease in ms
-- ARGV[2..] = pairs of message id and token
${serverNowMsLua}
local deadline = serverNowMs() + tonumber(ARGV[1])
local extended = 0
-- 500 messages per HMGET and ZADD keep unpack() well inside Lua's stack
-- limit.
for first = 2, #ARGV, 1000 do
  local ids = {}
  for i = first, math.min(first + 999, #ARGV), 2 do table.insert(ids, ARGV[i]) end
  local current = redis.call('HMGET', KEYS[2], unpack(ids))
  local args = {}
  for j, id in ipairs(ids) do
    if current[j] == ARGV[first + 2 * j - 1] then
      table.insert(args, deadline)
      table.insert(args, id)
    end
  end
  if #args > 0 then
    extended = extended + redis.call('ZADD', KEYS[1], 'XX', 'CH', unpack(args))
  end
end
return extended
`;
