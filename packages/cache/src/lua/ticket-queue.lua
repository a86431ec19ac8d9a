-- Writes a queued buyer's ticket unless the key already names a live purchase: a place of this SKU still
-- in line (a retry whose reservation had lapsed: never a second place), this SKU's order, or another
-- SKU's place or order (the key reused). A refused purchase leaves its key free.
-- KEYS: 1 ticket   ARGV: 1 ticket (JSON), 2 ttl (ms), 3 activity id, 4 sku id
-- Returns { 'WRITTEN' }, or { 'QUEUED' | 'CREATED' | 'TAKEN', the ticket there }.
local current = redis.call('GET', KEYS[1])
if current then
  local ticket = cjson.decode(current)
  if ticket.state ~= 'REFUSED' then
    if ticket.activityId ~= tonumber(ARGV[3]) or ticket.skuId ~= tonumber(ARGV[4]) then
      return { 'TAKEN', current }
    end
    return { ticket.state, current }
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return { 'WRITTEN' }
