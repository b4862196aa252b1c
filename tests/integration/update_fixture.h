// The fixture of the update tests (update_test, update_batch_test, one binary): boards of
// every kind on the suite's Redis, and the listing of a period.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "hot/keys.h"
#include "service/leaderboards.h"

namespace bk::update_test {

using service::Leaderboards;
using service::Update;
using service::UpdateStatus;
using std::chrono::hours;
using std::chrono::minutes;

inline Instant at(const char* text) {
  return *parse_rfc3339(text);
}

inline const char* const kBoards = R"(  - name: pts
    periods: [daily, weekly, monthly]
    timezone: Asia/Shanghai
    max_points: 3000000
    retention: {daily: 3650d, weekly: 3660d, monthly: 3690d}
  - name: lap
    periods: [daily]
    order: asc
    update: best
    time_resolution: s
    min_points: 1
    max_points: 3600000
    retention: {default: 3650d}
  - name: late
    periods: [daily]
    tie_break: latest
    max_points: 1000
    retention: {default: 3650d}
  - name: flat
    periods: [daily]
    tie_break: none
    update: replace
    min_points: -50
    max_points: 100
    retention: {default: 3650d}
  - name: dd
    periods: [daily, weekly]
    max_points: 1000
    dedupe_window: 1s
    retention: {default: 3650d}
  - name: small
    periods: [daily, monthly]
    min_points: -50
    max_points: 100
    retention: {default: 3690d}
)";

// Boards with a long grace and skew, so three days of events are all open at once.
inline const char* const kWideBoards = R"(  - name: "b*"
    periods: [daily, weekly]
    timezone: Europe/London
    max_points: 10000000
    max_clock_skew: 4d
    archive: {grace: 5d}
    retention: {default: 3660d}
  - name: "c*"
    periods: [daily]
    order: asc
    update: best
    time_resolution: s
    max_points: 10000000
    max_clock_skew: 4d
    archive: {grace: 5d}
    retention: {default: 3660d}
)";

class UpdateTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  Instant now = at("2026-11-22T12:00:00+08:00");

  Leaderboards boards(Instant clock_now) { return Leaderboards(config, conn, Clock(clock_now)); }

  std::vector<service::Standing> all(Leaderboards& lb, const std::string& board,
                                     const std::string& period) {
    return lb.reads().top_at({lb.resolve(board, period, std::nullopt)}, 0, 100000);
  }
};

}  // namespace bk::update_test
