-- Deletes a lease (or a mark its holder set) only while it still carries the holder's token.
-- KEYS: 1 lease or mark   ARGV: 1 holder token
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
