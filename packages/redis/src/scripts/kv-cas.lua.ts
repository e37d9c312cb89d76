/** The Lua source of the key-value store's compare-and-swap script. */
export const kvCasLua = `
-- kvCas: sets a key only when its current value is the expected one (or,
-- when no value is expected, when it has none).  Returns 1 when it was set,
-- 0 otherwise.
-- KEYS[1] = the key
-- ARGV[1] = the expected JSON text ("" when none is expected)
-- ARGV[2] = "1" when a value is expected, "0" when the key must be absent
-- ARGV[3] = the new JSON text
-- ARGV[4] = TTL in ms (0: none)
local current = redis.call('GET', KEYS[1])
if ARGV[2] == '1' then
  if current ~= ARGV[1] then return 0 end
elseif current then
  return 0
end
if tonumber(ARGV[4]) > 0 then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[3])
end
return 1
`;
