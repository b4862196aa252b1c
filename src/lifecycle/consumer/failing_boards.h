// Boards whose script calls get a lasting error (service::UpdateStatus::failed): which fail,
// since when and why, when each is retried (its own backoff), and which the running pass over
// this consumer's pending entries sends again.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lifecycle/consumer/entry.h"
#include "lifecycle/ingest.h"

namespace bk::lifecycle::consumer {

// Their events stay pending, in stream order: they are sent again only by a pass over this
// consumer's pending entries that starts once the board's own backoff is over (a pass reads
// them oldest first; sending one read anew, or one met in the middle of a pass, could apply a
// member's later event before an earlier one). Every other board goes on.
class FailingBoards {
 public:
  FailingBoards(const Backoff& retry, IngestObserver& observer);

  // The board's events are not sent now: it fails, and this is not a pass retrying it.
  bool withheld(const std::string& board, bool own_pass) const;
  // One of its events was left pending meanwhile.
  void waited(const std::string& board);

  // A pass over the pending entries starts: it retries the boards whose backoff is over.
  void start_pass(Steady::time_point now);
  // The pass is over: a board it retried that did not fail again is back (whatever became
  // of its events, nothing of it is held for its key).
  void end_pass();
  // `at`, or earlier when a failing board's retry is due before it (not before `now`).
  Steady::time_point first_retry(Steady::time_point now, Steady::time_point at) const;

  // A call of `board` failed with a lasting error; `unit` picks the backoff's jitter.
  void failed(const std::string& board, const std::string& error, double unit);
  // A call of `board` went through: no longer failing, if it was.
  void back(const std::string& board, const char* how);

  // One line per failing board, for a drain that gives up.
  void describe(std::vector<std::string>& why) const;

 private:
  struct State {
    std::string error;
    Steady::time_point since;
    std::chrono::system_clock::time_point since_wall;
    std::int64_t attempts = 0;  // failed calls in a row
    Steady::time_point next_retry;
    std::int64_t waited = 0;  // events left pending meanwhile (counted each time)
  };
  const Backoff& retry_;
  IngestObserver& observer_;
  std::map<std::string, State> failing_;
  std::set<std::string> retry_in_pass_;  // failing boards the running pass sends again

  std::vector<FailingBoard> list() const;
};

}  // namespace bk::lifecycle::consumer
