package redisstore

import "github.com/redis/go-redis/v9"

// The Redis store's scripts. Each runs atomically on the server, so two
// replicas answering (or claiming) one entry at once cannot both win. P
// (an argument) is the key prefix ending in "{sus}:"; an entry is the hash
// P.."e:"..id; P.."pending:"..kind and P.."pending:"..kind..":"..principal
// are sorted sets of the pending ids scored by their deadline, so a cap
// counts only what has not expired; P.."all" orders every entry by
// creation; an entry's "open" field names the key of the open entry of
// its binding, for Reuse. Time is Redis's (TIME), in milliseconds.

// luaPrelude are the helpers every script shares.
const luaPrelude = `
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function unpend(P, key)
  local f = redis.call('HMGET', key, 'id', 'kind', 'principal')
  redis.call('ZREM', P..'pending:'..f[2], f[1])
  redis.call('ZREM', P..'pending:'..f[2]..':'..f[3], f[1])
end
local function unopen(key)
  local f = redis.call('HMGET', key, 'open', 'id')
  if f[1] and redis.call('GET', f[1]) == f[2] then redis.call('DEL', f[1]) end
end
-- expire ends a pending or approved entry past its deadline; false when
-- the entry does not exist.
local function expire(P, key, now)
  local f = redis.call('HMGET', key, 'state', 'expires', 'id')
  if not f[1] then return false end
  if (f[1] == 'pending' or f[1] == 'approved') and now >= tonumber(f[2]) then
    if f[1] == 'pending' then unpend(P, key) end
    unopen(key)
    redis.call('HSET', key, 'state', 'expired')
    if f[1] == 'pending' then redis.call('PUBLISH', P..'done', f[3]) end
  end
  return true
end
local function reply(key, s)
  local h = redis.call('HGETALL', key)
  table.insert(h, 1, s)
  return h
end
`

// KEYS: entry, open, pending:kind, pending:kind:principal, all, seq.
// ARGV: id, kind, principal, session, tool, digest, ttl ms, max per
// principal, max total, reuse (0/1), data, history ms, P.
var createScript = redis.NewScript(luaPrelude + `
local P = ARGV[13]
local now = nowms()
if ARGV[10] == '1' then
  local old = redis.call('GET', KEYS[2])
  if old and expire(P, P..'e:'..old, now) then
    local st = redis.call('HGET', P..'e:'..old, 'state')
    if st == 'pending' or st == 'approved' then return reply(P..'e:'..old, 'reused') end
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local maxWho, maxTotal = tonumber(ARGV[8]), tonumber(ARGV[9])
if maxWho > 0 and redis.call('ZCARD', KEYS[4]) >= maxWho then return {'capwho'} end
if maxTotal > 0 and redis.call('ZCARD', KEYS[3]) >= maxTotal then return {'captotal'} end
local exp = now + tonumber(ARGV[7])
local seq = redis.call('INCR', KEYS[6])
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'kind', ARGV[2], 'principal', ARGV[3], 'session', ARGV[4], 'tool', ARGV[5],
  'digest', ARGV[6], 'state', 'pending', 'data', ARGV[11], 'created', now, 'expires', exp, 'open', KEYS[2])
redis.call('PEXPIREAT', KEYS[1], exp + tonumber(ARGV[12]))
redis.call('SET', KEYS[2], ARGV[1])
redis.call('PEXPIREAT', KEYS[2], exp)
redis.call('ZADD', KEYS[3], exp, ARGV[1])
redis.call('ZADD', KEYS[4], exp, ARGV[1])
redis.call('ZADD', KEYS[5], seq, ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -100001)
return reply(KEYS[1], 'created')
`)

// KEYS: entry. ARGV: P.
var touchScript = redis.NewScript(luaPrelude + `
if not expire(ARGV[1], KEYS[1], nowms()) then return {'unknown'} end
return reply(KEYS[1], 'ok')
`)

// KEYS: entry. ARGV: P, to, by, reason, answer, require (0/1), principal,
// session, tool, digest.
var resolveScript = redis.NewScript(luaPrelude + `
local P = ARGV[1]
local now = nowms()
if not expire(P, KEYS[1], now) then return {'unknown'} end
local f = redis.call('HMGET', KEYS[1], 'state', 'principal', 'session', 'tool', 'digest', 'id')
local require = ARGV[6] == '1'
if require and ARGV[7] ~= f[2] then return {'unknown'} end
if f[1] == 'expired' then return reply(KEYS[1], 'expired') end
if f[1] ~= 'pending' then return reply(KEYS[1], 'already') end
if require and (ARGV[8] ~= f[3] or ARGV[9] ~= f[4] or ARGV[10] ~= f[5]) then return reply(KEYS[1], 'mismatch') end
unpend(P, KEYS[1])
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'by', ARGV[3], 'reason', ARGV[4], 'answer', ARGV[5], 'resolved', now)
if ARGV[2] ~= 'approved' then unopen(KEYS[1]) end
redis.call('PUBLISH', P..'done', f[6])
return reply(KEYS[1], 'ok')
`)

// KEYS: entry. ARGV: P, principal, session, tool, digest.
var claimScript = redis.NewScript(luaPrelude + `
if not expire(ARGV[1], KEYS[1], nowms()) then return {'unknown'} end
local f = redis.call('HMGET', KEYS[1], 'state', 'principal', 'session', 'tool', 'digest')
if ARGV[2] ~= f[2] then return {'unknown'} end
if ARGV[3] ~= f[3] or ARGV[4] ~= f[4] or ARGV[5] ~= f[5] then return {'mismatch'} end
local st = f[1]
if st == 'approved' then
  redis.call('HSET', KEYS[1], 'state', 'used')
  unopen(KEYS[1])
  return reply(KEYS[1], 'ok')
end
if st == 'used' then return reply(KEYS[1], 'claimed') end
if st == 'denied' then return reply(KEYS[1], 'denied') end
if st == 'expired' then return reply(KEYS[1], 'expired') end
if st == 'pending' then return reply(KEYS[1], 'notyet') end
return reply(KEYS[1], 'already')
`)

// KEYS: open. ARGV: P.
var lookupScript = redis.NewScript(luaPrelude + `
local id = redis.call('GET', KEYS[1])
if not id then return {'unknown'} end
local key = ARGV[1]..'e:'..id
if not expire(ARGV[1], key, nowms()) then return {'unknown'} end
local st = redis.call('HGET', key, 'state')
if st ~= 'pending' and st ~= 'approved' then return {'unknown'} end
return reply(key, 'ok')
`)

// KEYS: entry. ARGV: P, id.
var withdrawScript = redis.NewScript(luaPrelude + `
if not expire(ARGV[1], KEYS[1], nowms()) then return {'gone'} end
local st = redis.call('HGET', KEYS[1], 'state')
if st == 'pending' then unpend(ARGV[1], KEYS[1]) end
unopen(KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[1]..'all', ARGV[2])
redis.call('PUBLISH', ARGV[1]..'done', ARGV[2])
if st == 'pending' then return {'pending'} end
return {'closed'}
`)

// KEYS: all. ARGV: P.
var listScript = redis.NewScript(luaPrelude + `
local now = nowms()
local out = {}
for _, id in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1]..'e:'..id
  if expire(ARGV[1], key, now) then
    table.insert(out, redis.call('HGETALL', key))
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`)
