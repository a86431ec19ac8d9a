-- The popular design: Redis is the truth of the sale. KEYS: 1 stock, 2 buyers, 3 order queue
-- ARGV: 1 user id, 2 order JSON
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 'ALREADY_PURCHASED' end
local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
if stock <= 0 then return 'SOLD_OUT' end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
return 'OK'
