// The board in Redis: apply batches of events atomically (one script call per board) and
// read slices, ranks and neighbourhoods. Scores stay encoded here; decoding is the caller's.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/period.h"
#include "core/policy.h"
#include "core/score_codec.h"
#include "hot/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// One period of the board that a batch writes to.
struct PeriodSlot {
  std::string period_name;  // "daily", "cup", ...
  Period period;
  ScoreLayout layout;
  Instant expire_at;  // period end + retention
};

// What the update script knows of a member's cold-tier row for one slot.
struct ColdValue {
  enum class State { unknown, absent, present };
  State state = State::unknown;
  std::int64_t encoded = 0;
};

struct HotEvent {
  std::string member;
  std::int64_t value = 0;
  Instant at;
  std::string event_id;            // empty: no idempotency
  std::vector<std::size_t> slots;  // indexes into HotBatch::slots
  std::vector<ColdValue> cold;     // parallel to slots
};

struct HotBatch {
  std::string board;
  Policy policy = Policy::increment;
  std::vector<PeriodSlot> slots;  // all share min/max/order/tie; spans may differ
  std::vector<HotEvent> events;
};

enum class HotOutcome { applied, duplicate, closed, out_of_range, needs_cold };

struct HotResult {
  HotOutcome outcome = HotOutcome::applied;
  std::vector<std::int64_t> points;     // applied: new points, parallel to the event's slots
  std::string period;                   // closed / out_of_range: "<period>:<id>"
  std::int64_t refused_points = 0;      // out_of_range: the points it would have reached
  std::vector<std::size_t> cold_slots;  // needs_cold: slots to look up
};

struct Listed {
  std::string member;
  std::int64_t encoded = 0;
  std::int64_t rank = 0;
};

class HotBoard {
 public:
  explicit HotBoard(std::string key_prefix);

  // Applies each batch with one script call; batches are pipelined. Results per event.
  std::vector<std::vector<HotResult>> apply(redis::Connection& conn,
                                            const std::vector<HotBatch>& batches);

  // Entries at positions [offset, offset + count) in listing order, with ranks.
  std::vector<Listed> range(redis::Connection& conn, const std::string& live_key,
                            std::int64_t offset, std::int64_t count);
  // The member and up to k neighbours each side; empty when the member is not hot.
  std::vector<Listed> around(redis::Connection& conn, const std::string& live_key,
                             const std::string& member, std::int64_t k);
  // The member's rank and score; nullopt when not hot.
  std::optional<Listed> member(redis::Connection& conn, const std::string& live_key,
                               const std::string& member);
  std::int64_t size(redis::Connection& conn, const std::string& live_key);

  const std::string& key_prefix() const { return prefix_; }

 private:
  std::string prefix_;
  redis::Script update_;
  redis::Script read_range_;
  redis::Script read_around_;
  redis::Script read_member_;
};

}  // namespace bk::hot
