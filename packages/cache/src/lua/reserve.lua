-- The whole fast path in one round trip on one slot.
-- KEYS: 1 sku hash (with its buyers as fields b:<user>), 2 reservations zset, 3 reservation requests hash,
--       4 user's rate counter
-- ARGV: 1 user id, 2 request id, 3 now (ms), 4 reservation ttl (ms), 5 rate limit, 6 rate window (ms)
-- Returns the outcome alone (NOT_LOADED, NOT_STARTED, ENDED, ALREADY, SOLD_OUT), or { outcome, detail }:
--   RATE_LIMITED <retry ms>, IN_FLIGHT <request id>, RESERVED <effective available before this reservation>.
-- A bare string is the cheapest reply to build: SOLD_OUT is what a storm gets a hundred thousand times.
local now = tonumber(ARGV[3])

-- One read for everything a rejection needs: a storm's sold-out answer costs a single redis.call.
local sku = redis.call('HMGET', KEYS[1], 'available', 'starts_ms', 'ends_ms', 'b:' .. ARGV[1])
if not sku[1] then
  return 'NOT_LOADED'
end

if now < tonumber(sku[2]) then
  return 'NOT_STARTED'
end
if now >= tonumber(sku[3]) then
  return 'ENDED'
end

if sku[4] then
  return 'ALREADY'
end

-- Nothing left as applied from the binlog: a sold-out answer costs no database work, so it skips the
-- rate limit too. This is the hot path of a storm once the units are gone.
local available = tonumber(sku[1])
if available <= 0 then
  return 'SOLD_OUT'
end

local count = redis.call('INCR', KEYS[4])
if count == 1 then
  redis.call('PEXPIRE', KEYS[4], ARGV[6])
end
if count > tonumber(ARGV[5]) then
  return { 'RATE_LIMITED', redis.call('PTTL', KEYS[4]) }
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

redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
return { 'RESERVED', effective }
