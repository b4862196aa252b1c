// The pause points (see stop_points.h): the armed point, its arrival count, and the stop.
#include "core/stop_points.h"

#include <signal.h>

#include <array>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "core/error.h"

namespace bk {
namespace {

constexpr std::array<std::pair<StopPoint, std::string_view>, 9> kNames{{
    {StopPoint::archive_begin, "archive.begin"},
    {StopPoint::archive_before_commit, "archive.before_commit"},
    {StopPoint::notice_before_commit, "notice.before_commit"},
    {StopPoint::notice_written, "notice.written"},
    {StopPoint::archive_released, "archive.released"},
    {StopPoint::publish_marked_through, "publish.marked_through"},
    {StopPoint::publish_before_xadd, "publish.before_xadd"},
    {StopPoint::publish_after_xadd, "publish.after_xadd"},
    {StopPoint::mark_done, "mark.done"},
}};

// Written once by arm_stop_points (main, before any other thread exists), read by stop_point.
struct Armed {
  std::atomic<bool> on{false};
  StopPoint point = StopPoint::archive_begin;
  std::int64_t at = 0;                // the arrival that stops
  std::atomic<std::int64_t> seen{0};  // arrivals so far
};
Armed armed;

std::string known_points() {
  std::string list;
  for (const auto& [point, name] : kNames) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

}  // namespace

std::string_view stop_point_name(StopPoint point) {
  for (const auto& [p, name] : kNames) {
    if (p == point) return name;
  }
  return "?";
}

std::optional<StopPoint> stop_point_named(std::string_view name) {
  for (const auto& [point, n] : kNames) {
    if (n == name) return point;
  }
  return std::nullopt;
}

void arm_stop_points(const std::optional<std::string>& value) {
  armed.on.store(false);
  armed.seen.store(0);
  if (!value) return;
  const std::string& v = *value;
  const std::size_t colon = v.rfind(':');
  const std::optional<StopPoint> point =
      colon == std::string::npos ? std::nullopt : stop_point_named(v.substr(0, colon));
  std::int64_t at = 0;
  const char* first = v.data() + (colon == std::string::npos ? v.size() : colon + 1);
  const char* last = v.data() + v.size();
  const auto parsed = std::from_chars(first, last, at);
  if (!point || first == last || parsed.ec != std::errc{} || parsed.ptr != last || at < 1) {
    throw UsageError(
        std::string(kStopAtVariable) + "='" + v +
        "' is not <point>:<n> with n >= 1 (a test-only setting; points: " + known_points() + ")");
  }
  armed.point = *point;
  armed.at = at;
  armed.on.store(true);
}

std::optional<std::string> arm_stop_points_from_env() {
  const char* v = std::getenv(kStopAtVariable);
  if (v == nullptr || *v == '\0') {
    arm_stop_points(std::nullopt);
    return std::nullopt;
  }
  arm_stop_points(std::string(v));
  return std::string(v);
}

void stop_point(StopPoint point) {
  if (!armed.on.load(std::memory_order_relaxed) || point != armed.point) return;
  if (armed.seen.fetch_add(1) + 1 != armed.at) return;
  // The whole process stops (every thread), and goes on if it is sent SIGCONT instead.
  raise(SIGSTOP);
}

}  // namespace bk
