-- Replaces a SKU's maintained state with a MySQL read taken at binlog position ARGV[1], unless the
-- cache already holds a newer position (the maintainer got there first). Reservations are left alone.
-- KEYS: 1 sku hash, 2 buyers set, 3 reservations zset, 4 reservation requests hash
-- ARGV: 1 pos, 2 available, 3 price_cents, 4 currency, 5 starts_ms, 6 ends_ms, 7 rebuy (0/1),
--       8 expire at (ms), 9.. buyer user ids
local current = redis.call('HGET', KEYS[1], 'pos')
if current and current > ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], 'pos', ARGV[1], 'available', ARGV[2], 'price_cents', ARGV[3], 'currency', ARGV[4],
  'starts_ms', ARGV[5], 'ends_ms', ARGV[6], 'rebuy', ARGV[7])
for i = 9, #ARGV, 500 do
  redis.call('SADD', KEYS[2], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
for i = 1, 4 do
  redis.call('PEXPIREAT', KEYS[i], ARGV[8])
end
return 1
