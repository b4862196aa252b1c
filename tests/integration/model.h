// The brute-force model integration tests compare boards against: the contract's listing
// order and competition ranks, computed the obvious way.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "service/leaderboards.h"

namespace bk::test {

struct Model {
  std::int64_t points = 0;
  Instant at;
};

// The contract's listing: more points first, then earlier achieved_at, then member bytes;
// competition ranks over (points, achieved_at).
inline std::vector<service::Standing> brute_force(const std::map<std::string, Model>& model) {
  std::vector<service::Standing> rows;
  for (const auto& [m, v] : model) rows.push_back({0, m, v.points, v.at});
  std::sort(rows.begin(), rows.end(), [](const service::Standing& a, const service::Standing& b) {
    if (a.points != b.points) return a.points > b.points;
    if (*a.achieved_at != *b.achieved_at) return *a.achieved_at < *b.achieved_at;
    return a.member < b.member;
  });
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool tie = i > 0 && rows[i].points == rows[i - 1].points &&
                     *rows[i].achieved_at == *rows[i - 1].achieved_at;
    rows[i].rank = tie ? rows[i - 1].rank : static_cast<std::int64_t>(i + 1);
  }
  return rows;
}

inline ::testing::AssertionResult same(const service::Standing& got,
                                       const service::Standing& want) {
  if (got.member == want.member && got.points == want.points && got.rank == want.rank &&
      got.achieved_at == want.achieved_at) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got rank " << got.rank << " " << got.member << " " << got.points << " "
         << (got.achieved_at ? format_rfc3339(*got.achieved_at) : "-") << ", want rank "
         << want.rank << " " << want.member << " " << want.points << " "
         << format_rfc3339(*want.achieved_at);
}

}  // namespace bk::test
