-- Copies an activity's sale window, rebuy policy and admission into one of its SKUs, guarded by position.
-- KEYS: 1 sku hash, 2 reservations zset, 3 reservation requests hash
-- ARGV: 1 pos, 2 starts_ms, 3 ends_ms, 4 rebuy (0/1), 5 grace (ms), 6 admission (empty: the API's default)
local current = redis.call('HGET', KEYS[1], 'apos')
if redis.call('EXISTS', KEYS[1]) == 0 or (current and current >= ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'apos', ARGV[1], 'starts_ms', ARGV[2], 'ends_ms', ARGV[3], 'rebuy', ARGV[4], 'admission', ARGV[6])
local expire_at = tonumber(ARGV[3]) + tonumber(ARGV[5])
for k = 1, 3 do
  redis.call('PEXPIREAT', KEYS[k], expire_at)
end
return 1
