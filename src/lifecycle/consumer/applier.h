// Applying a batch: its entries read as events (the malformed ones dead letters), the events
// of failing boards withheld, the rest sent through the update path, and each result turned
// into what becomes of its entry.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lifecycle/consumer/entry.h"
#include "lifecycle/consumer/failing_boards.h"
#include "lifecycle/ingest.h"
#include "service/leaderboards.h"

namespace bk::lifecycle::consumer {

// A batch: its entries, and what parsing made of them.
struct Batch {
  std::vector<Entry> entries;
  std::int64_t reclaimed = 0;  // of them, taken over from other consumers
  std::vector<Verdict> verdicts;
  std::vector<std::string> reasons;
  std::vector<std::string> labels;  // why each dead letter is dead
  std::vector<service::Update> updates;
  std::vector<std::size_t> index;  // entry of each update
  // Planned while the batch before it applied (read ahead), or not yet.
  std::optional<service::Leaderboards::Prepared> prepared;
  Steady::time_point read_at = Steady::now();
};

// The events of `entries`; the malformed ones are dead letters. `redelivered`: the entries
// were read again from a pending list (this consumer's own, or taken over from another):
// some may have been applied before.
Batch parse_batch(std::vector<Entry> entries, const std::vector<StreamNames>& streams,
                  std::int64_t reclaimed, bool redelivered);

// What the results of a batch said of its boards and of the cold tier.
struct Applied {
  std::string cold_reason;                        // why the cold tier failed, as said
  std::map<std::string, std::string> failed_now;  // board -> its error, this batch
  std::set<std::string> worked_now;               // boards whose calls went through
};

class Applier {
 public:
  Applier(service::Leaderboards& boards, FailingBoards& failing, std::size_t streams);

  // Plans the batch's updates (points are not used here).
  void prepare(Batch& b);
  // Withholds the events of failing boards not retried now (`own_pass`: read by a pass that
  // may retry some): they stay pending without being sent. Counted in `batch`.
  void withhold_failing(Batch& b, bool own_pass, IngestStats& batch);
  // Applies the batch's updates and sets each entry's verdict; counts in `batch`.
  // `while_applying`, when set, runs while the batch's script calls run at the server.
  Applied apply(Batch& b, const std::function<void()>& while_applying, IngestStats& batch);

 private:
  service::Leaderboards& boards_;
  FailingBoards& failing_;
  std::size_t streams_;

  std::vector<service::UpdateResult> apply_batch(Batch& b,
                                                 const std::function<void()>& while_applying);
  std::vector<service::UpdateResult> apply_per_stream(const std::vector<service::Update>& updates);
};

}  // namespace bk::lifecycle::consumer
