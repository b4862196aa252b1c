// Reset and drop in PostgreSQL (the protocol: docs/architecture.md, "Moderation"; run by
// service/moderation_reset.cpp): a period's lock held across its emptying (T1 here, T2 in
// Redis), and drop's board-wide part (profiles; with history, the archived periods).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/types.h"

namespace bk::cold {

namespace pg {
struct Link;
struct Session;
}  // namespace pg

// What T1 found and did.
struct PeriodEmptied {
  // The period's status in the periods table when it is not open ("archived", "lost"): then,
  // if asked to refuse such a period, nothing was deleted.
  std::optional<std::string> closed_status;
  std::int64_t cold = 0;  // cold rows deleted (their counted pages went with them)
};

// One archived period whose history a drop removed.
struct HistoryDropped {
  std::string period;
  std::string period_id;
  std::int64_t rows = 0;  // history rows (history_rows, or its own history_large_<n> table)
};

struct BoardDropped {
  std::int64_t profiles = 0;            // profile rows deleted
  std::vector<HistoryDropped> history;  // with history: every periods row of the board
};

class BoardReset {
 public:
  // Shares the store's connection (cold::ColdStore::link()).
  explicit BoardReset(std::shared_ptr<pg::Link> link);
  // Releases a period lock still held (errors swallowed: a broken connection released it).
  ~BoardReset();
  BoardReset(const BoardReset&) = delete;
  BoardReset& operator=(const BoardReset&) = delete;

  // Waits, however long, for the period's lock (cold/history.h period_lock) and holds it as a
  // session lock until unlock(): a running spill or archive claim of the period finishes
  // first, later ones wait or skip. One period at a time.
  void lock(const PeriodKey& period);
  // T1, under the lock: one committed transaction deleting the period's cold rows and counted
  // pages. With `refuse_closed`, a period the periods table says is archived (or lost) is
  // left alone and its status returned.
  PeriodEmptied empty_period(bool refuse_closed);
  // Releases the lock. Throws UnavailableError when the connection broke while it was held
  // (the server dropped the lock with it, so a spill may have run in between): the caller
  // says to run the operation again.
  void unlock();

  // Drop's board-wide part, one transaction: the board's profiles; with `history`, its
  // history rows (history_rows, and the tables of its large periods, dropped) and its
  // periods rows. Takes the retention lock, so it never races a pruning of the same rows.
  BoardDropped drop_board(const std::string& board, bool history);

 private:
  std::shared_ptr<pg::Link> link_;
  std::shared_ptr<pg::Session> session_;  // the connection holding the lock
  std::optional<PeriodKey> locked_;
};

}  // namespace bk::cold
