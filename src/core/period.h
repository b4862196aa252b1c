// Periods of a board in its time zone: which period an instant falls in, its id and bounds.
// Pure functions of the instant passed in; nothing here reads the clock.
#pragma once
#include <date/tz.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/cron.h"
#include "core/time.h"

namespace bk {

enum class PeriodKind { hourly, daily, weekly, monthly, yearly, alltime, custom };

std::optional<PeriodKind> parse_period_kind(std::string_view name);  // not "custom"
std::string_view period_kind_name(PeriodKind kind);

// A window: the period runs for part of each cycle only (a cycle is what the period would be
// without a window: the day, the week, or from one cron firing to the next). It starts
// `offset` after the cycle's wall-clock start (0 for cron periods: at the firing) and ends
// `length` later, both counted on the zone's wall clock, so a 18:00 window of 1h ends at
// 19:00 local also on a DST day. Its bounds follow the periods' rule for wall times that do
// not exist or exist twice. A cron period's window never runs past the next firing; the
// config keeps a fixed kind's offset + length within the shortest cycle (docs/config).
struct PeriodWindow {
  Millis offset{0};
  Millis length{0};
};

struct PeriodSpec {
  PeriodKind kind = PeriodKind::daily;
  std::string name;                          // "daily", ..., or a named period's name
  std::shared_ptr<const CronSchedule> cron;  // set for custom periods only
  std::optional<PeriodWindow> window{};      // set for windowed periods only
};

// One concrete period: its id ("2026-11-22", "2026-W47", "2026-11-20T18:00", "all") and
// half-open bounds [start, end).
struct Period {
  std::string id;
  Instant start;
  Instant end;
  bool operator==(const Period& o) const { return id == o.id && start == o.start && end == o.end; }
};

// The alltime period spans these instants; events outside are refused.
inline constexpr std::int64_t kAlltimeStartMs = 1577836800000;  // 2020-01-01T00:00:00Z
inline constexpr std::int64_t kAlltimeEndMs = 4102444800000;    // 2100-01-01T00:00:00Z

// Throws RefusedError when t has no period (before the alltime origin, no cron firing,
// between two windows: the message names the next window's start). A window's id is its
// cycle's id.
Period period_containing(const PeriodSpec& spec, const date::time_zone& zone, Instant t);
// For reads: the period containing t, or between two windows the last one that started
// before t (the next one when none did). Throws RefusedError as period_containing does
// when t has no cycle.
Period period_latest(const PeriodSpec& spec, const date::time_zone& zone, Instant t);
// The first period that starts after t (for a windowed period: the next window).
Period next_period(const PeriodSpec& spec, const date::time_zone& zone, Instant t);
// period_containing for one spec and zone, remembering the last period found: events come
// in time order, mostly within one period, and finding a period formats its id. Periods
// never overlap (half-open bounds), so an instant inside the last period found
// has that period (windows included: an instant between windows asks again). Not
// thread-safe (one per caller).
class PeriodFinder {
 public:
  PeriodFinder(const PeriodSpec& spec, const date::time_zone& zone) : spec_(spec), zone_(zone) {}
  const Period& containing(Instant t) {
    if (!last_ || t < last_->start || t >= last_->end) {
      last_ = period_containing(spec_, zone_, t);
    }
    return *last_;
  }

 private:
  const PeriodSpec& spec_;
  const date::time_zone& zone_;
  std::optional<Period> last_;
};

// The period with this id, or nullopt when the id is malformed or names no period.
std::optional<Period> period_from_id(const PeriodSpec& spec, const date::time_zone& zone,
                                     std::string_view id);
// An upper bound of any period's length: the nominal length plus room for DST shifts.
Millis longest_period(const PeriodSpec& spec, const date::time_zone& zone);

}  // namespace bk
