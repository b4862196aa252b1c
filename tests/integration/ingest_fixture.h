// The fixture of the ingest tests (ingest_test, ingest_pending_test,
// ingest_failing_board_test, one binary): the board "ing", and what the consumer group of a
// stream has read, holds pending and applied.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "redis/slots.h"
#include "service/leaderboards.h"

namespace bk::ingest_test {

using namespace std::chrono_literals;

inline const char* const kBoards = R"(  - name: ing
    periods: [daily]
    max_points: 10000000
    hot_keep: 100000
    display: 10
    retention: {default: 3650d}
)";

inline std::int64_t field(const redis::Reply& info, const std::string& name) {
  for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
    if (info.at(i).as_string() == name)
      return info.at(i + 1).is_nil() ? -1 : info.at(i + 1).as_int();
  }
  return -1;
}

// Whether the group has read every entry of each stream and nothing is pending, polling
// every `every` for at most `tries` times.
inline bool caught_up(redis::Connection& conn, const std::vector<std::string>& streams, int tries,
                      std::chrono::milliseconds every = 100ms) {
  for (int i = 0; i < tries; ++i, std::this_thread::sleep_for(every)) {
    bool all = true;
    for (const std::string& s : streams) {
      const redis::Reply groups = conn.command({"XINFO", "GROUPS", s});
      all = all && !groups.is_error() && !groups.elements.empty() &&
            field(groups.at(0), "lag") == 0 && field(groups.at(0), "pending") == 0;
    }
    if (all) return true;
  }
  return false;
}

// Board "ing"'s daily points on 2027-01-04, member -> points, as the library reads them.
inline std::map<std::string, std::int64_t> ing_points(redis::Connection& conn,
                                                      const std::string& prefix) {
  return test::points_of(conn, test::make_config(prefix, kBoards), "ing", "daily",
                         *parse_rfc3339("2027-01-04T12:00:00Z"));
}

// Three streams with hash tags of their own whose slots lie in the three thirds that the
// test cluster's masters serve: each on another master.
inline std::vector<std::string> streams_on_three_masters(const std::string& prefix) {
  std::vector<std::string> streams;
  for (int third = 0; third < 3; ++third) {
    for (int n = 0; streams.size() == static_cast<std::size_t>(third); ++n) {
      const std::string key = prefix + ":{ev" + std::to_string(n) + "}";
      if (redis::key_slot(key) * 3 / redis::kClusterSlots == third) streams.push_back(key);
    }
  }
  return streams;
}

inline std::int64_t pending_count(redis::Connection& conn, const std::string& stream) {
  const redis::Reply r = conn.command({"XPENDING", stream, "boardkeeper"});
  return r.is_error() ? -1 : r.at(0).as_int();
}

using test::dead_lettered_ids;

}  // namespace bk::ingest_test
