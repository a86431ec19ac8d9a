-- Forgets a place that was never put in line (or whose immediate decision is not final), only while the
-- ticket still holds that very place: QUEUED for the same SKU at the same time.
-- KEYS: 1 ticket   ARGV: 1 activity id, 2 sku id, 3 queued at (ms)
local current = redis.call('GET', KEYS[1])
if current then
  local ticket = cjson.decode(current)
  if ticket.state == 'QUEUED' and ticket.activityId == tonumber(ARGV[1]) and ticket.skuId == tonumber(ARGV[2])
    and ticket.queuedAtMs == tonumber(ARGV[3]) then
    redis.call('DEL', KEYS[1])
    return 1
  end
end
return 0
