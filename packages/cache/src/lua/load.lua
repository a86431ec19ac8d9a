-- Replaces a SKU's maintained state with a MySQL read taken at binlog position ARGV[1], unless the
-- cache already holds a newer position (the maintainer got there first). A reservation of a user who
-- holds an order in the read is done: MySQL's count already has its unit, and the order's change, at or
-- below this position, will be skipped, so it would never come to remove it. Other reservations stay.
-- KEYS: 1 sku hash (buyers as fields b:<user>, their count in 'buyers'), 2 reservations zset,
--       3 reservation requests hash
-- ARGV: 1 pos, 2 available, 3 price_cents, 4 currency, 5 starts_ms, 6 ends_ms, 7 rebuy (0/1),
--       8 expire at (ms), 9.. buyer user ids
local current = redis.call('HGET', KEYS[1], 'pos')
if current and current > ARGV[1] then
  return 0
end

local stale = {}
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'b:' then
    stale[#stale + 1] = field
  end
end
for i = 1, #stale, 500 do
  redis.call('HDEL', KEYS[1], unpack(stale, i, math.min(i + 499, #stale)))
end

redis.call('HSET', KEYS[1], 'pos', ARGV[1], 'available', ARGV[2], 'price_cents', ARGV[3], 'currency', ARGV[4],
  'starts_ms', ARGV[5], 'ends_ms', ARGV[6], 'rebuy', ARGV[7], 'buyers', #ARGV - 8)
for i = 9, #ARGV, 250 do
  local last = math.min(i + 249, #ARGV)
  local fields = {}
  for j = i, last do
    fields[#fields + 1] = 'b:' .. ARGV[j]
    fields[#fields + 1] = 1
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('ZREM', KEYS[2], unpack(ARGV, i, last))
  redis.call('HDEL', KEYS[3], unpack(ARGV, i, last))
end
for i = 1, 3 do
  redis.call('PEXPIREAT', KEYS[i], ARGV[8])
end
return 1
