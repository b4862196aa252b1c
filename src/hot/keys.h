// The Redis key names of the public contract. Every key of a board carries the hash tag
// {<board>} so a board's whole family lives on one Redis Cluster slot.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace bk::hot {

class BoardKeys {
 public:
  BoardKeys(std::string_view prefix, std::string_view board);

  // <prefix>:{<board>}:<period>:<period-id>
  std::string live(std::string_view period, std::string_view period_id) const;
  // ...:meta (spilled / closed markers)
  std::string meta(std::string_view period, std::string_view period_id) const;
  // ...:stale (members that may be hot and cold at once; reads skip their cold rows)
  std::string stale(std::string_view period, std::string_view period_id) const;
  // League boards (core/league.h): ...:seats (ZSET: member -> its seat, division * 2^32 +
  // place) and ...:waiting (ZSET: member -> its first event's ms, for members whose event came
  // before tick opened the period's cohorts: tick seats them in that order).
  std::string seats(std::string_view period, std::string_view period_id) const;
  std::string waiting(std::string_view period, std::string_view period_id) const;
  // <prefix>:{<board>}:divisions (HASH, no TTL: field "" the close count it was copied at,
  // field <member> its division's index): the update path's cache of league_members.
  std::string divisions() const;
  // <prefix>:{<board>}:periods
  std::string registry() const;
  // <prefix>:{<board>}:synced (the :meta hashes say which periods have cold rows) and
  // <prefix>:{<board>}:held (members whose events wait behind one held for the cold tier)
  std::string synced() const;
  std::string held() const;
  // <prefix>:{<board>}:names and <prefix>:{<board>}:metadata (HASHes: member -> display name,
  // member -> its JSON object): the profiles of members that may be hot. tick moves those
  // of members hot nowhere to PostgreSQL and then sets the hash's field "" (no member id is
  // empty): readers look there for members that hash lacks, and only for that field.
  std::string names() const;
  std::string metadata() const;
  // <prefix>:{<board>}:bans (HASH, no TTL: field "" the board's bans generation, bumped by
  // every ban and unban; field <member> "1" for each banned member): the update path's cache
  // of PostgreSQL's bans table, rebuilt by the board sync (hot/moderation.h)
  std::string bans() const;
  // <prefix>:{<board>}:busy (HASH: registry member -> ticks in a row that found it busy)
  std::string busy() const;
  // <prefix>:{<board>}:ids:<bucket> (SET: the event ids applied while the clock was in time
  // bucket <bucket> = epoch ms / (dedupe_window / 4); see hot/protocol.h)
  std::string ids(std::int64_t bucket) const;
  // <prefix>:{<board>}:keys:<bucket> (HASH: idempotency key -> its request's fingerprint, for
  // the keys claimed in that bucket; see hot/idempotency.h)
  std::string fingerprints(std::int64_t bucket) const;
  // <prefix>:{<board>}:inflight:<stream> (ZSET: entries of the stream applied to the board
  // and perhaps not yet acknowledged; score: the entry id's milliseconds)
  std::string inflight(std::string_view stream) const;

 private:
  std::string base_;  // "<prefix>:{<board>}:"
};

// <prefix>:boards
std::string boards_key(std::string_view prefix);
// <prefix>:closes (STREAM: close notices, entry id <seq>-1; hot/closes.h): the default of a
// board's closes_stream.
std::string closes_key(std::string_view prefix);
// <prefix>:deployment (STRING: the id of this data set, which a PostgreSQL schema names as
// its owner; see service/deployment.h)
std::string deployment_key(std::string_view prefix);
// <prefix>:cursor_key (STRING: a copy of the deployment's cursor key, which PostgreSQL's
// serve_keys holds; see hot/deployment.h)
std::string cursor_key_copy_key(std::string_view prefix);
// "<period>:<period-id>", the registry's member for a period.
std::string registry_member(std::string_view period, std::string_view period_id);

}  // namespace bk::hot
