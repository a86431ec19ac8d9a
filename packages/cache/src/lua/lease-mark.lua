-- Sets a mark (a flag that outlives the lease) only while the lease still carries the holder's token: a
-- holder stalled past its life cannot put its mark over the next holder's.
-- KEYS: 1 lease, 2 mark (one slot)   ARGV: 1 holder token
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[1])
  return 1
end
return 0
