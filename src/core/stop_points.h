// Test-only pause points in tick's close path: with BK_TEST_STOP_AT=<point>:<n> in its
// environment, the process stops itself (SIGSTOP) the n-th time it reaches that point, so that
// a test can SIGKILL it exactly there (tests/integration/closes_test.cpp). Nobody else sets the
// variable; unset, a point costs one test of a flag (docs/architecture.md, "Pause points").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bk {

// Every point, in the order a tick reaches them for one period and then one notice.
enum class StopPoint {
  archive_begin,           // the period claimed, its archive's transaction open, nothing written
  archive_before_commit,   // its rows copied into the transaction, the merge not run
  notice_before_commit,    // the merge run and the notice inserted (and NOTIFY queued), no COMMIT
  notice_written,          // archive and notice committed; the period's hot keys still there
  archive_released,        // the hot keys freed; the next period or the publisher next
  publish_marked_through,  // a stream's notices at or below its top marked published (P1-P2)
  publish_before_xadd,     // a notice's entry built, not added (P3)
  publish_after_xadd,      // added to the stream, not marked published
  mark_done,               // marked published
};

// Its name in BK_TEST_STOP_AT: "archive.begin", "publish.after_xadd", ...
std::string_view stop_point_name(StopPoint point);
std::optional<StopPoint> stop_point_named(std::string_view name);

// The environment variable, and the one place it is read.
inline constexpr const char* kStopAtVariable = "BK_TEST_STOP_AT";

// Reads BK_TEST_STOP_AT once (main, before any command runs). Unset or empty: every point
// stays a no-op. Malformed (not <known point>:<n>, n >= 1): UsageError naming what is wrong.
// Returns the point armed, for main's warning.
std::optional<std::string> arm_stop_points_from_env();
// The same from a value (tests of the parser); nullopt disarms.
void arm_stop_points(const std::optional<std::string>& value);

// Stops the process here when this is the armed point's n-th arrival (counted per process).
void stop_point(StopPoint point);

}  // namespace bk
