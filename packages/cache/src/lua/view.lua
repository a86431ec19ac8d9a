-- A SKU's public view in one call: its named fields and the reservations still live.
-- KEYS: 1 sku hash, 2 reservations zset
-- ARGV: 1 now (ms)
-- Returns { available, price_cents, currency, starts_ms, ends_ms, rebuy, pos, buyers, live reservations };
-- available is nil when the cache holds no state for the SKU.
local fields = redis.call('HMGET', KEYS[1], 'available', 'price_cents', 'currency', 'starts_ms', 'ends_ms', 'rebuy',
  'pos', 'buyers')
if not fields[1] then
  return {}
end
fields[9] = redis.call('ZCOUNT', KEYS[2], ARGV[1], '+inf')
return fields
