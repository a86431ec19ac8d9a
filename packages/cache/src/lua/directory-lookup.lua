-- What the sale directory holds of one SKU, in one call.
-- KEYS: 1 the directory's state hash, 2 the activity's hash
-- ARGV: 1 the SKU's field
-- Returns { complete, window, sku } (each nil when absent).
return { redis.call('HGET', KEYS[1], 'complete'), unpack(redis.call('HMGET', KEYS[2], 'w', ARGV[1])) }
