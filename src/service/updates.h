// The update path of service::Leaderboards: validate and plan updates, batch them per board
// (coalescing a member's events), apply them through the hot tier, rehydrate members from
// the cold tier, and keep one member's stream events in order across outages (holds).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "service/types.h"
#include "service/update_tiers.h"

namespace bk::service {

// The script calls of one apply(): per batch, every update's own event ("singles", in
// order) and what is sent, where one member's events may be coalesced into one.
struct UpdateCalls {
  std::vector<hot::HotBatch> batches;                     // as sent
  std::vector<std::vector<hot::HotEvent>> singles;        // per batch: one per update
  std::vector<std::vector<std::size_t>> indexes;          // per batch: the update of each single
  std::vector<std::vector<std::vector<std::size_t>>> of;  // per batch, per sent event: its singles
};

// Chunk size of one script call: large enough to amortise the round trip, small enough
// that one call never blocks Redis for long.
inline constexpr std::size_t kEventsPerCall = 1000;
// The largest |value| of an update (beyond it: Refusal::invalid_value).
inline constexpr std::int64_t kMaxUpdateValue = kMaxExactInteger - 1;

class Updates {
 public:
  // What the unit is given by its owner (Leaderboards): the score layout of each period of
  // the config, the acknowledged stream entries (Leaderboards::acknowledged_below: the
  // milliseconds below which a stream's entries are acknowledged, 0 when none are known),
  // and the profile writer that runs after the scores.
  using Layouts = std::unordered_map<const PeriodSpec*, ScoreLayout>;
  using AcknowledgedMs = std::function<std::int64_t(const std::string& stream)>;
  using WriteProfiles = std::function<void(const std::vector<Update>&, std::vector<UpdateResult>&)>;

  // `cold` is null when no cold tier is attached. `counters` is updated as updates go.
  Updates(const Config& config, Clock clock, const Layouts& layouts, HotUpdateTier& hot,
          ColdUpdateTier* cold, Counters& counters, AcknowledgedMs acknowledged_ms,
          WriteProfiles write_profiles);

  // Validates and plans `updates` (refused ones get their result in `results`, sized like
  // `updates`) and makes their script calls, without a round trip. `detail`: what applied
  // results carry (service/types.h).
  UpdateCalls prepare(const std::vector<Update>& updates, Detail detail,
                      std::vector<UpdateResult>& results);
  // Sends the calls prepare() made; `results` as prepare() left them.
  std::vector<UpdateResult> apply(const std::vector<Update>& updates, UpdateCalls& calls,
                                  std::vector<UpdateResult> results,
                                  const std::function<void()>& while_waiting = {});
  // See Leaderboards::hold.
  void hold(const std::vector<Update>& updates);

  struct Refused {
    Refusal refusal;
    std::string reason;
  };
  // A valid update's board entry, event time and the period of each of the board's periods.
  struct Planned {
    const BoardConfig* config = nullptr;
    Instant at;
    struct Target {
      const PeriodSpec* spec;
      Period period;
    };
    std::vector<Target> targets;
  };
  // Why `u` is refused before any server is asked, or nullopt and its plan in `out`.
  std::optional<Refused> plan(const Update& u, Planned& out) const;

 private:
  struct Group;
  struct Split;
  struct Pending;
  struct Retry;
  using HotResults = std::vector<std::vector<hot::HotResult>>;
  using ColdHits = std::vector<std::optional<cold::ColdHit>>;
  using Found = std::map<std::pair<std::size_t, std::size_t>, ColdHits>;

  // `batch` to be sent again (see updates.cpp): its stream entries are checked in flight.
  static hot::HotBatch resent(hot::HotBatch batch);
  // "board 'b' member 'm'", for reasons.
  static std::string describe(const Update& u);

  // Planning (update_planning.cpp).
  std::optional<Refused> plan_fields(const Update& u) const;
  std::optional<Refused> plan_targets(const Update& u, Instant now, Planned& out) const;
  std::map<std::string, Group> plan_all(const std::vector<Update>& updates,
                                        std::vector<UpdateResult>& results) const;
  UpdateCalls make_batches(const std::vector<Update>& updates,
                           const std::map<std::string, Group>& groups, Detail detail) const;
  void add_batch(const Group& g, const std::vector<std::size_t>& chunk,
                 const std::vector<Update>& updates, hot::HotBatch batch, UpdateCalls& out) const;

  // Sending and reporting (updates.cpp).
  void register_board(const std::string& board);
  void apply_calls(const std::vector<Update>& updates, UpdateCalls& calls,
                   std::vector<UpdateResult>& results, const std::function<void()>& while_waiting);
  Split report_sent(const std::vector<Update>& updates, const UpdateCalls& calls,
                    const HotResults& sent, std::vector<UpdateResult>& results) const;
  void resend_split(const std::vector<Update>& updates, const UpdateCalls& calls,
                    const HotResults& sent, Split& split, std::vector<UpdateResult>& results);
  void report(const hot::HotBatch& batch, const hot::HotResult& r, const hot::HotEvent& e,
              const Update& u, UpdateResult& out) const;
  void report_cold(const Update& u, UpdateResult& out) const;
  static void report_standings(const hot::HotBatch& batch, const hot::HotResult& r,
                               UpdateResult& out);
  void report_parts(const hot::HotBatch& batch, const std::vector<hot::HotEvent>& singles,
                    const std::vector<std::size_t>& parts, const hot::HotResult& r,
                    const std::vector<std::size_t>& indexes, const std::vector<Update>& updates,
                    std::vector<UpdateResult>& results) const;

  // Rehydration and sync (update_rehydration.cpp).
  HotResults apply_with_rehydration(std::vector<hot::HotBatch>& batches,
                                    const std::function<void()>& while_waiting = {});
  void sync_where_needed(const std::vector<hot::HotBatch>& batches, HotResults& results);
  bool sync_boards(const std::set<std::string>& boards);
  std::optional<ColdHits> look_up_cold(const std::vector<hot::HotBatch>& batches,
                                       const HotResults& results,
                                       const std::vector<Pending>& pending);
  Retry retry_batches(std::vector<hot::HotBatch>& batches, const HotResults& results,
                      const std::vector<Pending>& pending, const ColdHits& hits, Found& found,
                      int round) const;
  void apply_retry(const Retry& retry, HotResults& results);

  // Holds (updates.cpp).
  void update_holds(const std::vector<Update>& updates, const std::vector<UpdateResult>& results);
  void hold_all(const std::map<std::string, hot::BoardScripts::Holds>& holds);

  const Config& config_;
  Clock clock_;
  const Layouts& layouts_;
  HotUpdateTier& hot_;
  ColdUpdateTier* cold_;
  Counters& counters_;
  AcknowledgedMs acknowledged_ms_;
  WriteProfiles write_profiles_;
  std::unordered_set<std::string> boards_registered_;
  // Per period spec of the config: the last period an update fell in (plan's cache).
  mutable std::unordered_map<const PeriodSpec*, PeriodFinder> finders_;
  std::string cold_failure_;  // why the cold tier failed during the current apply()
};

// Coalescing: one member's events of `batch`'s call become one event where applying it is
// exactly what applying them one by one gives (see update_coalescing.cpp). Fills
// batch.events; returns, per event of `batch`, the singles it stands for.
std::vector<std::vector<std::size_t>> coalesce(hot::HotBatch& batch,
                                               const std::vector<hot::HotEvent>& singles);

}  // namespace bk::service
