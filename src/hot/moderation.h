// The Redis side of moderation (docs/architecture.md, "Moderation"): take a member off periods
// of one board and ban it in the same atomic step (R1, member_remove.lua), lift a ban (U2),
// the periods' tombstones (tick), and the bans generation a board sync starts from. The
// replies are parsed by pure functions, tested without a server (tests/hot/moderation_test).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "hot/board_scripts.h"
#include "hot/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// One live period of the board that a removal covers.
struct RemovalPeriod {
  std::string period_name;  // "daily"
  std::string period_id;    // "2026-11-22"
  Instant expire_at;        // period end + retention (the tombstone's TTL)
};

// What R1 did to one period.
struct RemovedFrom {
  bool hot = false;         // the member left the live ZSET
  bool tombstoned = false;  // the period may have cold rows: the member is a tombstone there
};

struct MemberRemoval {
  // "All periods" mode only: registry members ("<period>:<id>") the caller did not pass.
  // Nothing was written; call again with them too.
  std::vector<std::string> again;
  std::vector<RemovedFrom> periods;  // parallel to the periods given (empty with `again`)
};

struct RemovalRequest {
  std::string board;
  std::string member;
  std::vector<RemovalPeriod> periods;
  bool ban = false;  // also enter the member in the board's bans hash
  bool all = false;  // the periods are every live period the caller knows (see `again`)
  // With `all`: registry members the caller saw and leaves alone (periods its config does
  // not know): not answered `again`.
  std::vector<std::string> ignored;
};

// member_remove.lua's reply, for `periods` periods. Throws redis::ReplyError for one the
// script never gives.
MemberRemoval parse_removal(const redis::Reply& reply, std::size_t periods);

class Moderation {
 public:
  explicit Moderation(std::string key_prefix);

  // R1: see member_remove.lua.
  MemberRemoval remove(redis::Connection& conn, const RemovalRequest& request);
  // U2: the member leaves the bans hash; true when it was there.
  bool unban(redis::Connection& conn, const std::string& board, const std::string& member);
  // R3: merged reads of the period in flight read again (its cold rows changed).
  void touch_reads(redis::Connection& conn, const PeriodKeys& keys);
  // Members of the period's stale set that are not hot (their cold rows are void).
  std::vector<std::string> tombstones(redis::Connection& conn, const PeriodKeys& keys);
  // After their cold rows were deleted: those of `members` still not hot leave the stale
  // set, and the period's spill generation moves (see tombstones_clear.lua). Returns how many.
  std::int64_t clear_tombstones(redis::Connection& conn, const PeriodKeys& keys,
                                const std::vector<std::string>& members);
  // S1: the board's bans generation, "" when the hash has none (see BoardScripts::sync).
  std::string bans_generation(redis::Connection& conn, const std::string& board);

 private:
  std::string prefix_;
  redis::Script remove_;
  redis::Script unban_;
  redis::Script tombstones_;
  redis::Script clear_;
};

}  // namespace bk::hot
