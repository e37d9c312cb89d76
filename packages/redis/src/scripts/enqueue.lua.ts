import { makeReadyLua, readyListLua, serverNowMsLua } from "./fragments.lua.ts";

/**
 * The Lua source of the enqueue script (see `message-queue.ts` for the key
 * layout).
 */
export const enqueueLua = `
-- enqueue: adds messages; a keyed one joins its key's pending list and only
-- enters B:ready when it is the list's head.  Returns how many entered
-- B:ready (0 when all wait for a delay or their key).
-- KEYS[1] = B:ready
-- KEYS[2] = B:delayed
-- KEYS[3] = B:msg
-- KEYS[4] = B:okey
-- KEYS[5] = B:seq
-- ARGV[1] = B, the base name of the queue's keys
-- ARGV[2] = delay in ms (0: ready now)
-- ARGV[3] = ordering key ("" for none)
-- ARGV[4] = priority (an integer from -5 to 5, checked by the caller)
-- ARGV[5] = what to publish on B:wake (the enqueuing process's origin, so
--           that its own subscribers skip what it woke locally)
-- ARGV[6..] = one JSON text per message
local base = ARGV[1]
local delay = tonumber(ARGV[2])
local orderingKey = ARGV[3]
if orderingKey == '' then orderingKey = nil end
local suffix = ''
if ARGV[4] ~= '0' then suffix = ':p' .. ARGV[4] end
${readyListLua}
${makeReadyLua}
${serverNowMsLua}
local count = #ARGV - 5
local last = redis.call('INCRBY', KEYS[5], count)
local due = 0
if delay > 0 then
  due = serverNowMs() + delay
end
local readied = 0
for i = 1, count do
  local id = string.format('%015d', last - count + i) .. suffix
  redis.call('HSET', KEYS[3], id, ARGV[i + 5])
  if orderingKey then redis.call('HSET', KEYS[4], id, orderingKey) end
  if delay > 0 then
    redis.call('ZADD', KEYS[2], due, id)
  else
    readied = readied + makeReady(id, orderingKey)
  end
end
if readied > 0 then redis.call('PUBLISH', base .. ':wake', ARGV[5]) end
return readied
`;
