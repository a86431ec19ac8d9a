-- The whole fast path in one round trip on one slot.
-- KEYS: 1 sku hash (with its buyers as fields <buyer_prefix><user>), 2 reservations zset, 3 reservation requests hash,
--       4 user's rate counter
-- ARGV: 1 user id, 2 request id, 3 now (ms), 4 reservation ttl (ms), 5 rate limit, 6 rate window (ms),
--       7 a queued buyer's reservation ttl (ms), 8 the admission of an activity without its own (sync, queued,
--       auto), 9 this API's queue now: off (nobody is queued), calm (queued activities), busy (auto ones too)
-- Returns the outcome alone (NOT_LOADED, ALREADY, BOUGHT, NOT_STARTED, ENDED, SOLD_OUT), or { outcome, detail }:
--   RATE_LIMITED <retry ms>, IN_FLIGHT <request id>, or
--   { RESERVED, <effective available before this reservation>, <1: the buyer goes to the queue, 0: decided now> }.
-- A bare string is the cheapest reply to build: SOLD_OUT is what a storm gets a hundred thousand times.
local now = tonumber(ARGV[3])

-- One read for everything a rejection needs: a storm's sold-out answer costs a single redis.call.
local sku = redis.call('HMGET', KEYS[1], 'available', 'starts_ms', 'ends_ms', buyer_prefix .. ARGV[1], 'admission')
if not sku[1] then
  return 'NOT_LOADED'
end

-- The user's requests in this rate window, this one included; past the limit, the time left.
local function over_rate_limit()
  local count = redis.call('INCR', KEYS[4])
  if count == 1 then
    redis.call('PEXPIRE', KEYS[4], ARGV[6])
  end
  if count > tonumber(ARGV[5]) then
    return { 'RATE_LIMITED', redis.call('PTTL', KEYS[4]) }
  end
end

-- A buyer's retry is told about their order even once the window has closed or the stock is gone. The
-- caller reads that order from MySQL (ALREADY), so a buyer's replays count against their rate limit too.
-- A key other than their order's is another purchase, refused here (BOUGHT): a bot repeating a buyer
-- costs the database nothing. "1" is a buyer whose order's key the cache does not know.
if sku[4] then
  return over_rate_limit() or ((sku[4] == '1' or sku[4] == ARGV[2]) and 'ALREADY' or 'BOUGHT')
end

-- Sold out as applied from the binlog, or outside the window: no database work, no rate limit. This
-- is the hot path of a storm once the units are gone. A reservation of this user still in flight may
-- be the very purchase that took the last unit, which CDC has not applied yet: the caller must learn
-- its outcome from MySQL, never SOLD_OUT (one more call, on rejections only).
local available = tonumber(sku[1])
local closed = (now < tonumber(sku[2]) and 'NOT_STARTED') or (now >= tonumber(sku[3]) and 'ENDED')
if closed or available <= 0 then
  local mine = redis.call('HGET', KEYS[3], ARGV[1])
  if mine and tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or 0) > now then
    return { 'IN_FLIGHT', mine }
  end
  return closed or 'SOLD_OUT'
end

local limited = over_rate_limit()
if limited then
  return limited
end

local held = redis.call('ZSCORE', KEYS[2], ARGV[1])
if held and tonumber(held) > now then
  return { 'IN_FLIGHT', redis.call('HGET', KEYS[3], ARGV[1]) or '' }
end

-- Expired reservations belong to requests that crashed or timed out: they stop counting.
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #expired > 0 then
  redis.call('ZREM', KEYS[2], unpack(expired))
  redis.call('HDEL', KEYS[3], unpack(expired))
end
local effective = available - redis.call('ZCARD', KEYS[2])
if effective <= 0 then
  return 'SOLD_OUT'
end

-- Queued or decided at once (ADR 0030): by the activity's admission, else the API's; auto queues only while
-- this API's decisions wait. A queued buyer's reservation lasts as long as the queue's worst wait.
local admission = sku[5]
if not admission or admission == '' then
  admission = ARGV[8]
end
local queued = ARGV[9] ~= 'off' and (admission == 'queued' or (admission == 'auto' and ARGV[9] == 'busy'))
redis.call('ZADD', KEYS[2], now + tonumber(queued and ARGV[7] or ARGV[4]), ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
return { 'RESERVED', effective, queued and 1 or 0 }
