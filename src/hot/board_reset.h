// Reset and drop on Redis (the protocol: docs/architecture.md, "Moderation"; run by
// service/moderation_reset.cpp): empty one period of a board (period_reset.lua), delete a
// board's own keys (board_drop.lua), and the read that tells whether a period is still live.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hot/board_scripts.h"
#include "hot/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// Where a period stands in Redis with respect to its archive.
enum class PeriodPhase {
  live,      // open for writes (or never written)
  frozen,    // closed for writes: an archive of it has begun
  archived,  // its archive committed and freed the hot keys
};

// What board_drop.lua deleted.
struct BoardKeysDropped {
  std::int64_t profiles = 0;  // profile fields (display names, metadata) of the board's hashes
  std::int64_t keys = 0;      // the board's own keys deleted
};

class BoardReset {
 public:
  explicit BoardReset(std::string key_prefix);

  PeriodPhase phase(redis::Connection& conn, const PeriodKeys& keys);

  // T2 of reset and drop: deletes the live ZSET and the stale set, makes :meta forget the
  // cold tier and bumps its generations (see period_reset.lua), and drops the registry entry.
  // Returns how many hot members went. Idempotent.
  std::int64_t empty_period(redis::Connection& conn, const BoardKeys& board,
                            const std::string& period, const std::string& period_id);

  // The board's own keys (registry, sync marker, held, busy, profile hashes) once every
  // period in `emptied` (registry members) was emptied. When the registry holds periods the
  // caller has not emptied, `again` lists them and nothing was deleted.
  struct DropKeys {
    std::vector<std::string> again;
    BoardKeysDropped dropped;
  };
  DropKeys drop_board_keys(redis::Connection& conn, const BoardKeys& board,
                           const std::vector<std::string>& emptied);
  // Removes the board from <prefix>:boards (another slot than the board's keys); true when
  // it was there.
  bool forget_board(redis::Connection& conn, const std::string& board);

 private:
  std::string prefix_;
  redis::Script period_reset_;
  redis::Script board_drop_;
};

}  // namespace bk::hot
