// The small board the serve-under-faults suites share (hung_backends_test, replica_test): "pts",
// one daily period, five members hot, archived a minute after the day ends; members m00, m01...
#pragma once
#include <string>

namespace bk::test {

inline const char* const kPtsBoard = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    archive: {grace: 1m}
    retention: {default: 30d}
)";

// The routes of its daily period.
inline const std::string kPtsDaily = "/v1/boards/pts/daily";

// "m00", "m01", ... "m19", "m20" ...
inline std::string pts_member(int i) {
  return std::string("m") + (i < 10 ? "0" : "") + std::to_string(i);
}

}  // namespace bk::test
