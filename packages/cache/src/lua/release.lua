-- Frees a reservation after a definite rejection, only if it is still the one this request made.
-- KEYS: 1 reservations zset, 2 reservation requests hash   ARGV: 1 user id, 2 request id
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
return 0
