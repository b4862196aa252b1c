// The right to erasure in Redis: step E3 of `erase` on one board's keys (erase_finish.lua)
// and the member's dead letters (dead_letter_erase.lua), each with a counting-only variant
// for --dry-run. service/moderation_erase.cpp drives them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hot/keys.h"
#include "hot/registry.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// What E3 removed from one board (or would remove, with a dry run).
struct BoardForgotten {
  std::int64_t profiles = 0;  // fields of :names and :metadata
  std::int64_t held = 0;      // the member's :held entry
  std::int64_t bans = 0;      // the member's :bans entry
  // Per period passed, in order: whether the member is hot there (dry run only; the real
  // run's removal of hot entries is E1's) and whether its tombstone was cleared.
  std::vector<std::int64_t> hot;
  std::vector<std::int64_t> tombstones;
};

class Eraser {
 public:
  Eraser();

  // E3 on the board's keys for `periods` (its live periods), in one script. `cold_ban`: E2
  // deleted the member's ban row, so the bans generation moves even when Redis's cache did
  // not hold it yet (a sync in flight may have read the row before E2: it starts again).
  BoardForgotten forget(redis::Connection& conn, const BoardKeys& keys,
                        const std::vector<LivePeriod>& periods, const std::string& member,
                        bool dry_run, bool cold_ban = false);

  // Which dead letters go: those of any board, or those whose `board` field is one of these.
  struct LetterBoards {
    bool any = true;
    std::vector<std::string> boards;
  };
  // Deletes (counts, with a dry run) the entries of `dead` (a dead-letter stream) whose
  // `member` field is `member` and whose board is one of `boards`, `chunk` entries per script
  // call.
  std::int64_t dead_letters(redis::Connection& conn, const std::string& dead,
                            const std::string& member, const LetterBoards& boards, bool dry_run,
                            std::int64_t chunk = 500);

 private:
  redis::Script forget_;
  redis::Script dead_letters_;
};

}  // namespace bk::hot
