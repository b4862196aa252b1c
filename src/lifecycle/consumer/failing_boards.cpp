// Failing boards, their backoff and their retries by passes (see failing_boards.h).
#include "lifecycle/consumer/failing_boards.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bk::lifecycle::consumer {

FailingBoards::FailingBoards(const Backoff& retry, IngestObserver& observer)
    : retry_(retry), observer_(observer) {}

bool FailingBoards::withheld(const std::string& board, bool own_pass) const {
  return failing_.count(board) != 0 && !(own_pass && retry_in_pass_.count(board) != 0);
}

void FailingBoards::waited(const std::string& board) {
  ++failing_[board].waited;
}

void FailingBoards::start_pass(Steady::time_point now) {
  retry_in_pass_.clear();
  for (const auto& [board, f] : failing_) {
    if (now >= f.next_retry) retry_in_pass_.insert(board);
  }
}

void FailingBoards::end_pass() {
  const std::set<std::string> retried = std::move(retry_in_pass_);
  retry_in_pass_.clear();
  for (const std::string& board : retried) back(board, "nothing of it is held any more");
}

Steady::time_point FailingBoards::first_retry(Steady::time_point now, Steady::time_point at) const {
  for (const auto& [board, f] : failing_) at = std::min(at, std::max(now, f.next_retry));
  return at;
}

std::vector<FailingBoard> FailingBoards::list() const {
  std::vector<FailingBoard> out;
  out.reserve(failing_.size());
  for (const auto& [board, f] : failing_) {
    out.push_back({board, f.error, f.since_wall, f.attempts});
  }
  return out;
}

// Failing (logged when it starts, or when its error changes), retried after its own backoff.
void FailingBoards::failed(const std::string& board, const std::string& error, double unit) {
  retry_in_pass_.erase(board);  // the rest of its events in this pass stay pending
  auto [it, started] = failing_.try_emplace(board);
  State& f = it->second;
  const auto now = Steady::now();
  ++f.attempts;
  f.next_retry = now + retry_.delay(f.attempts, unit);
  if (started) {
    f.since = now;
    f.since_wall = std::chrono::system_clock::now();
    spdlog::error(
        "ingest: board '{}' fails: {}; its events stay pending, in order, and are retried "
        "with backoff; the other boards go on",
        board, error);
  } else if (error != f.error) {
    spdlog::error("ingest: board '{}' still fails, now: {}", board, error);
  }
  const bool changed = started || error != f.error;
  f.error = error;
  if (changed) observer_.failing_boards(list());
}

void FailingBoards::back(const std::string& board, const char* how) {
  const auto it = failing_.find(board);
  if (it == failing_.end()) return;
  const std::chrono::duration<double> took = Steady::now() - it->second.since;
  spdlog::info(
      "ingest: board '{}' {} after {:.1f} s ({} failed calls; its events were left pending "
      "{} times meanwhile)",
      board, how, took.count(), it->second.attempts, it->second.waited);
  failing_.erase(it);
  retry_in_pass_.erase(board);
  observer_.failing_boards(list());
}

void FailingBoards::describe(std::vector<std::string>& why) const {
  for (const auto& [board, f] : failing_) {
    why.push_back("board '" + board + "' fails (" + std::to_string(f.attempts) +
                  " calls in a row): " + f.error);
  }
}

}  // namespace bk::lifecycle::consumer
