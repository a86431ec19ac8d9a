-- Applies, in order, a batch of committed changes of one SKU, each guarded by its binlog position:
-- a change at or below the applied position is a no-op (snapshot reads may share a position).
-- KEYS: 1 sku hash (buyers as fields <buyer_prefix><user>, their count in 'buyers'), 2 reservations zset,
--       3 reservation requests hash
-- ARGV: 1 JSON array of changes, 2 grace after the sale ends (ms), 3 units-back channel, 4 "<activity>:<sku>"
--   (published when `available` goes up, so API instances drop their sold-out snapshots first)
--   stock: { kind = "stock", op, position, available, priceCents, currency }
--   order: { kind = "order", op, position, userId, requestId (the order's key), live (true = blocks another purchase) }
--   gone:  { kind = "gone", op = "d", position }   (the SKU row was deleted)
-- Returns { applied, skipped, stopped_at, verdict } where verdict is
--   "OK", "REBUILD" (no state: rebuild from MySQL, then resend from stopped_at) or "GONE".
local changes = cjson.decode(ARGV[1])
local applied, skipped = 0, 0

for i, change in ipairs(changes) do
  local current = redis.call('HGET', KEYS[1], 'pos')
  if not current then
    return { applied, skipped, i, 'REBUILD' }
  end
  local fresh = change.position > current or (change.op == 'r' and change.position == current)
  if not fresh then
    skipped = skipped + 1
  elseif change.kind == 'gone' then
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
    return { applied + 1, skipped, i, 'GONE' }
  elseif change.kind == 'stock' then
    if change.available > tonumber(redis.call('HGET', KEYS[1], 'available') or 0) then
      redis.call('PUBLISH', ARGV[3], ARGV[4])
    end
    redis.call('HSET', KEYS[1], 'pos', change.position, 'available', change.available,
      'price_cents', change.priceCents, 'currency', change.currency)
    applied = applied + 1
  else
    local buyer = buyer_prefix .. change.userId
    if change.live then
      redis.call('HINCRBY', KEYS[1], 'buyers', redis.call('HSET', KEYS[1], buyer, change.requestId or 1))
      -- The order exists now: the reservation that admitted it has done its job.
      redis.call('ZREM', KEYS[2], change.userId)
      redis.call('HDEL', KEYS[3], change.userId)
    elseif redis.call('HDEL', KEYS[1], buyer) == 1 then
      -- Only a buyer actually removed is counted: a change of an order that no longer blocks (a closed
      -- order deleted or edited) removes nothing. (Negating HDEL's 0 would send "-0", which HINCRBY refuses.)
      redis.call('HINCRBY', KEYS[1], 'buyers', -1)
    end
    redis.call('HSET', KEYS[1], 'pos', change.position)
    applied = applied + 1
  end
end

local ends = redis.call('HGET', KEYS[1], 'ends_ms')
if ends then
  local expire_at = tonumber(ends) + tonumber(ARGV[2])
  for k = 1, 3 do
    redis.call('PEXPIREAT', KEYS[k], expire_at)
  end
end
return { applied, skipped, #changes + 1, 'OK' }
