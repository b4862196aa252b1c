-- Applies a batch of score events to the periods of ONE board atomically (protocol 1).
-- Every key shares the board's hash tag, so this runs on one Redis Cluster slot.
--
-- KEYS[1]            the board's period registry (ZSET member "<period>:<id>", score end ms)
-- KEYS[2]            the board's sync marker: exists once the :meta hashes of the board's
--                    periods are known to say which periods have cold rows (PostgreSQL is
--                    the truth: after Redis lost data, the caller syncs them from there)
-- KEYS[3]            the board's held HASH: member -> order token of an earlier event of the
--                    member that is waiting for the cold tier (later events must wait too)
-- KEYS[4]            the board's bans HASH (see member_remove.lua): field "" the bans
--                    generation, field <member> "1" for each banned member. Read only when it
--                    holds more than the generation (one HLEN per call otherwise)
-- then nbuckets      the board's event id buckets (SETs, see hot/protocol.h): the first is
--                    the current one, which new ids go to
-- then (inflight)    the board's in-flight markers of one stream (ZSET: one member per call,
--                    its applied order tokens joined by commas, scored by the highest entry
--                    id ms among the call's tokens)
-- then 3 per slot j  (1-based): the live ZSET, its :meta HASH, its :stale SET (members that
--                    may be hot and cold at once)
-- ARGV: policy(i|b|r) order(d|a) tie(e|l|n) min_points max_points nslots nevents hold sync
--   nbuckets ids_ttl_ms inflight acknowledged_below_ms points marker_ms fields joined at_base
--   floor_id
--   hold "1": when an event must look up cold rows, also hold spills of that period from
--   removing members for 2 seconds, so the look-up cannot go stale (a writer that kept
--   losing the race to a busy spill asks for this; it guarantees progress)
--   sync "1": the caller has a cold tier; without the board's sync marker nothing is
--   written and every event answers {"sync"} (Redis cannot prove which periods spilled)
--   nbuckets: how many id bucket keys follow KEYS[4]; ids_ttl_ms: the current bucket's TTL
--   when it is created. An event id is applied at most once while it is in any bucket.
--   inflight: "0" no marker key; "1" the applied events with an order token (a stream entry
--   id) are marked, by one marker for the call; "2" marked, and an event whose entry is
--   marked already is a "dup" (it was applied before its entry was read again, or, for a
--   call sent again after look-ups, by another consumer that took the entry over), and a
--   coalesced event with a marked entry answers {"split"}.
--   floor_id: with inflight "1", the lowest entry id ("<ms>-<seq>") of the call's tokens, or "".
--     Entries read as new are checked too when a marker holds an id at or above it: after
--     the stream's node rolled back (a failover to a replica that lacked their delivery, a
--     restart from an older file) applied entries are delivered again as new. Markers of a
--     single consumer's earlier calls hold lower ids: the common call looks at the markers
--     scored floor_id ms or more (the previous call's at most) and goes on unchecked.
--   acknowledged_below_ms: markers scored below it are dropped first (every entry in them
--   is acknowledged: never read again). marker_ms: the score of this call's marker, at
--   least the ms of every order token of the call.
--   points: "1" an applied event answers {mask, points...}; "0" only its mask (an integer)
--     (see Returns for the short forms of a call whose events all applied)
--   fields: which optional fields each event carries, a letter each: "i" event_id, "t"
--     order_token, "s" used. An absent field is "" (event_id, order_token) or "*" (used) for
--     every event. Two more letters say how the rest travels: "j", every event has an order
--     token, none coalesced, and they come joined by commas in `joined` instead of one per
--     event (a stream consumer's common call: the joined text is the call's in-flight marker
--     as it is, and the events are split out of it only on the general path); "p", each
--     event's value and time come as one integer, packed = (at_ms - at_base) * 2^32 + (value
--     + 2^31), below 2^52 so exact in a double (the caller packs a call whose values fit 32
--     bits and whose times lie within 2^20 ms of its earliest, at_base). The common call
--     sends two arguments per event. "r", standings: the call has one event, and the reply
--     carries its member's standing in every period (see Returns).
--   joined: the events' order tokens joined by commas with "j" in fields, else "".
--   at_base: with "p" in fields, the ms the packed times count from, else "".
--   per slot (6): registry_member start_ms span_units resolution_ms expire_at_ms end_ms
--   per event: member, value at_ms (or packed), [event_id] [order_token] [used], where used is
--     "*" (every slot, in order, nothing known of the cold tier: the common event) or nslots_used
--     followed, per used slot, by: slot cold
--     cold: "?" not looked up; "a<gen>" absent from the cold tier; "p<gen>:<encoded>" its
--     cold score. <gen> is the period's spill generation when the caller was told to look:
--     a spill that removed members since then may have moved this member to the cold tier
--     after the look-up, so a stale generation means "look again".
--     order_token: "" or the event's place in its stream; an event whose member is held by
--     another token waits, the held event itself clears the hold once it is resolved.
--     ",tok1,tok2,..." (just "," without tokens): the event stands for several events of one
--     member, coalesced by the caller where applying it is exactly what one by one would
--     give (each token is marked in flight). Where it might not be (the member is held, the
--     sum leaves the range, which one by one would refuse only in part, or, with inflight
--     "2", one of its entries is marked), it answers {"split"}: nothing
--     was written for it, the caller sends the events one by one. ",!,tok1,...": a coalesced
--     replace whose value changed within it: it changes the time even if the value is the
--     member's current one.
--
-- Reads and writes are batched: one ZMSCORE per period (and SMISMEMBER per id bucket) before
-- the events, one ZADD per period (and one SADD) after. In between, the events see each
-- other's writes through a table, so the outcome is exactly that of applying them one by
-- one, in order; the script is atomic, so no client can see the difference.
-- The Lua side is most of the script's cost, so it allocates little per event: events are
-- kept in parallel arrays, members are numbered once (1..nm) and every per-member table is
-- an array indexed by that number.
--
-- Scores: encoded = rank_points * (span + 1) + time_part; smaller ranks higher. Every number
-- handled is an integer below 2^53, so Lua's doubles hold it exactly.
-- Returns the number of events when every one applied without points and none rehydrated
-- (the common call of a stream consumer); {"points", then each event's points per slot, event
-- by event} when every one applied with points on the fast path (none rehydrated); else one
-- array per event:
--   {mask, points...}  applied: integers; bit i-1 of mask is set when used slot i was written
--     from its cold value (rehydrated), then the new points per used slot (with points "0":
--     the mask alone, an integer instead of an array)
--   {"dup"}  {"closed", period}  {"range", period, points}
--   {"cold", slot, gen, ...}  the member is absent from spilled periods: look up its cold
--     rows and call again with them
--   {"blocked"}  an earlier event of this call for the same member returned "cold": call
--     again after it, so one member's events are never reordered
--   {"waiting"}  an earlier event of the member (another order token) is held: not applied
--   {"sync"}  the board's sync marker is missing (see KEYS[2]): nothing was written
--   {"banned"}  the member is banned from the board (KEYS[4]): nothing written for it, its
--     event id is not recorded
--   {"split"}  a coalesced event (see order_token) must be sent as its events; the member's
--     later events of the call answer the same, so that they follow it
--   {"span", period}  the event time lies outside the period (a caller bug)
--   {"expired", period}  the key's expiry (period end + retention) is already past on the
--     Redis server's clock (a replay or backfill far behind real time): Redis would delete
--     the write at once, so it is refused instead of silently lost
-- With "r" in fields: {the reply above, then per slot j: its standing (update_standing.lua)};
-- {the reply above} alone when nothing was written ({"sync"}).
--
-- The script is joined from its parts at build time (bk_embed, top-level CMakeLists.txt),
-- in this order; they share the chunk's locals, so the order is the script's.
-- #include update_args.lua
-- #include update_event.lua
-- #include update_reads.lua
-- #include update_at_once.lua
-- #include update_standing.lua
-- #include update_league.lua

-- blocked / split: members whose later events of this call must not be applied before an
-- earlier one that answered "cold" / "split" (they answer the same; the caller resends them).
local blocked, split, split_any = {}, {}, false
local before_hot = want_standing and hot_scores_read() or nil  -- as read, before any write
local all_at_once, began = apply_all_at_once()
if not all_at_once then
  if began then read_scores() end  -- nothing was written: read them again
  fill_scores()
  split_joined()
end
for e = 1, all_at_once and 0 or nevents do
  local mi, token = ev_mi[e], ev_token[e]
  local holder = token and held[mi]
  if token and marked[token] then
    results[e] = {'dup'}
  elseif banned[mi] then
    -- Refused for good (an entry applied before the ban answers dup above: it was removed
    -- with the member).
    results[e] = {'banned'}
    if holder and holder == token then
      held[mi] = nil
      released[#released + 1] = mem[mi]
    end
  elseif split[mi] or (ev_id[e] and split_any) then
    -- After a split, events with ids go after it too: two members' events may share an id.
    results[e] = {'split'}
    split[mi] = true
  elseif blocked[mi] then
    results[e] = {'blocked'}
  elseif merged(token) and (holder or (checking and part_marked(token))) then
    results[e] = {'split'}
    split[mi], split_any = true, true
  elseif holder and holder ~= token then
    results[e] = {'waiting'}
  else
    -- forced: a coalesced replace whose value changed within it (only replace looks at it)
    local r, applied = apply_event(e, mi, policy == 'r' and merged(token) and byte(token, 2) == 33)
    results[e] = r
    local status = not applied and r[1]
    if applied then
      if inflight_key and token then
        new_marks[#new_marks + 1] = token
        -- An entry read twice within one call applies once (a coalesced event's entries
        -- each count).
        if checking then
          for t in string.gmatch(token, '[^,]+') do marked[t] = true end
        end
      end
    elseif status == 'range' and merged(token) then
      results[e] = {'split'}
      split[mi], split_any = true, true
    end
    if status == 'cold' then
      blocked[mi] = true
    elseif holder then
      -- The held event is resolved (applied or refused): the member's later events may go.
      held[mi] = nil
      released[#released + 1] = mem[mi]
    end
  end
end
if #released > 0 then each_chunk('HDEL', KEYS[3], released, false) end

-- Write: every changed member once, with its last score; then TTLs, event ids and markers.
local args = {}  -- of every period's ZADD in turn, its first k entries
for j = 1, nslots do
  local s = slots[j]
  local dirty, score, k = s.dirty, s.score, 0
  for mi = 1, nm do
    if dirty[mi] then
      args[k + 1], args[k + 2] = format('%d', score[mi]), mem[mi]
      k = k + 2
    end
  end
  if k > 0 then
    each_chunk('ZADD', s.key, args, false, k)
    ensure_ttl(s)
  end
end
seat_league()
if #new_ids > 0 then
  each_chunk('SADD', KEYS[5], new_ids, false)
  if redis.call('PTTL', KEYS[5]) == -1 then redis.call('PEXPIRE', KEYS[5], ids_ttl) end
end
if #new_marks > 0 then
  -- Coalesced tokens (",!,t1,t2") join as they are: readers split at commas and skip "!".
  redis.call('ZADD', inflight_key, marker_ms, table.concat(new_marks, ','))
end
local reply = results
if all_at_once then reply = flat_points or nevents end
if want_standing then return standings_reply(reply, before_hot) end
return reply
