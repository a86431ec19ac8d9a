-- Replaces a SKU's maintained state with a MySQL read taken at binlog position ARGV[1], unless the
-- cache already holds a newer position (the maintainer got there first). The read's buyers were written
-- beforehand, in bounded chunks, into a staging hash of this load alone (KEYS[4]); here it gets the
-- SKU's fields and atomically replaces the SKU hash, so the fast path never sees half a load.
-- A sale window applied after the read (activity position newer than ARGV[1]) is kept, never undone.
-- A reservation of a user who holds an order in the read is done: MySQL's count already has its unit,
-- and the order's change, at or below this position, will be skipped, so it would never come to remove
-- it. Other reservations stay.
-- KEYS: 1 sku hash, 2 reservations zset, 3 reservation requests hash, 4 staging hash (<buyer_prefix><user> fields)
-- ARGV: 1 pos, 2 available, 3 price_cents, 4 currency, 5 starts_ms, 6 ends_ms, 7 rebuy (0/1),
--       8 grace after the sale ends (ms), 9 buyer count, 10 force (1: the binlog source changed, so the
--       positions in the cache belong to another binlog and fence nothing), 11 units-back channel,
--       12 "<activity>:<sku>" (a rebuild may bring units back: API instances drop their snapshots),
--       13 admission (sync, queued, auto; empty: the purchase API's default)
local force = ARGV[10] == '1'
local current = redis.call('HGET', KEYS[1], 'pos')
if current and current > ARGV[1] and not force then
  redis.call('DEL', KEYS[4])
  return 0
end

local window = redis.call('HMGET', KEYS[1], 'apos', 'starts_ms', 'ends_ms', 'rebuy', 'admission')
if force or not (window[1] and window[1] > ARGV[1]) then
  window = { ARGV[1], ARGV[5], ARGV[6], ARGV[7], ARGV[13] }
end
redis.call('HSET', KEYS[4], 'pos', ARGV[1], 'available', ARGV[2], 'price_cents', ARGV[3], 'currency', ARGV[4],
  'apos', window[1], 'starts_ms', window[2], 'ends_ms', window[3], 'rebuy', window[4],
  'admission', window[5] or '', 'buyers', ARGV[9])

for _, user in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if redis.call('HEXISTS', KEYS[4], buyer_prefix .. user) == 1 then
    redis.call('ZREM', KEYS[2], user)
    redis.call('HDEL', KEYS[3], user)
  end
end

redis.call('RENAME', KEYS[4], KEYS[1])
redis.call('PUBLISH', ARGV[11], ARGV[12])
local expire_at = tonumber(window[3]) + tonumber(ARGV[8])
for i = 1, 3 do
  redis.call('PEXPIREAT', KEYS[i], expire_at)
end
return 1
