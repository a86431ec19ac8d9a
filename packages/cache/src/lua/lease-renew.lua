-- Extends a lease only for the holder that took it: a lease that lapsed and was taken by another stays theirs.
-- KEYS: 1 lease   ARGV: 1 holder token, 2 life in ms
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
