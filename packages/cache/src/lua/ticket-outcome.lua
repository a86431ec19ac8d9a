-- Writes a queued buyer's outcome on their ticket only while it is still the place that was decided: absent
-- (it lapsed, or was never written), or QUEUED for the same SKU at the same time. A retry of the key queued
-- again since, or an outcome written already (a redelivery), is left as it is.
-- KEYS: 1 ticket   ARGV: 1 outcome (JSON), 2 ttl (ms), 3 activity id, 4 sku id, 5 queued at (ms)
-- Returns 1 when written, 0 when left.
local current = redis.call('GET', KEYS[1])
if current then
  local ticket = cjson.decode(current)
  if ticket.state ~= 'QUEUED' or ticket.activityId ~= tonumber(ARGV[3]) or ticket.skuId ~= tonumber(ARGV[4])
    or ticket.queuedAtMs ~= tonumber(ARGV[5]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
