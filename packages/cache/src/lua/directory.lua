-- Writes entries of the sale directory, each fenced by the binlog position it was read or committed at:
-- an entry already written at a later position is kept.
-- KEYS: 1 the index of activities (set), 2.. one activity hash per entry (all in the directory's slot)
-- ARGV: 1 force (1: the binlog source changed, so the stored positions fence nothing),
--       2 JSON array aligned with KEYS[2..]: { activity, field, position, value }
-- A field's value is "<position> <value>": field "w" (the activity's window) holds its end in ms or "-"
-- once deleted; field "s:<sku>" holds "+" while the SKU's stock row exists, "-" once deleted.
-- Returns how many entries were written.
local force = ARGV[1] == '1'
local written = 0
for i, entry in ipairs(cjson.decode(ARGV[2])) do
  local key = KEYS[i + 1]
  local current = redis.call('HGET', key, entry.field)
  if force or not current or string.match(current, '^%S+') < entry.position then
    redis.call('HSET', key, entry.field, entry.position .. ' ' .. entry.value)
    redis.call('SADD', KEYS[1], entry.activity)
    written = written + 1
  end
end
return written
