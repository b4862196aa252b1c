// Instants and their text forms (RFC 3339 in, RFC 3339 UTC with milliseconds out).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bk {

using Millis = std::chrono::milliseconds;
using Instant = std::chrono::time_point<std::chrono::system_clock, Millis>;

inline std::int64_t to_epoch_ms(Instant t) {
  return t.time_since_epoch().count();
}
inline Instant from_epoch_ms(std::int64_t ms) {
  return Instant{Millis{ms}};
}

// The event times accepted: 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z.
inline constexpr Instant kEarliestEventTime{Millis{0}};
inline constexpr Instant kLatestEventTime{Millis{253'402'300'799'999}};

// Parses "2026-11-22T14:03:00Z", "2026-11-22T14:03:00.250+08:00" and the like.
std::optional<Instant> parse_rfc3339(std::string_view text);
// Formats as "2026-11-22T06:03:00.250Z".
std::string format_rfc3339(Instant t);

// The service clock: real time unless --now fixed it (tests, backfills, replays).
class Clock {
 public:
  Clock() = default;
  explicit Clock(Instant fixed) : fixed_(fixed) {}
  Instant now() const;

 private:
  std::optional<Instant> fixed_;
};

}  // namespace bk
