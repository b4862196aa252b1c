// Period arithmetic on a zone's wall clock. A period starts at a local boundary (midnight,
// Monday, the 1st...); when that wall time does not exist (DST gap) the period starts when
// the clock jumps, and when it exists twice it starts at its first occurrence. So a local
// day may be 23 or 25 hours long, and the repeated hour of a fall-back is one 2-hour period.
#include "core/period.h"

#include <date/iso_week.h>

#include <array>
#include <charconv>
#include <cstdio>

#include "core/error.h"

namespace bk {
namespace {

using std::chrono::hours;
using LocalMs = date::local_time<Millis>;

constexpr std::array<std::pair<std::string_view, PeriodKind>, 6> kKinds{{
    {"hourly", PeriodKind::hourly},
    {"daily", PeriodKind::daily},
    {"weekly", PeriodKind::weekly},
    {"monthly", PeriodKind::monthly},
    {"yearly", PeriodKind::yearly},
    {"alltime", PeriodKind::alltime},
}};

Instant to_instant(const date::time_zone& zone, LocalMs local) {
  return std::chrono::time_point_cast<Millis>(zone.to_sys(local, date::choose::earliest));
}

LocalMs local_of(const date::local_days& d) {
  return LocalMs{d.time_since_epoch()};
}

std::string two(unsigned v) {
  char buf[4];
  std::snprintf(buf, sizeof buf, "%02u", v % 100U);
  return buf;
}

std::string four(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d", v);
  return buf;
}

std::string day_id(date::local_days d) {
  const date::year_month_day ymd{d};
  return four(static_cast<int>(ymd.year())) + "-" + two(static_cast<unsigned>(ymd.month())) + "-" +
         two(static_cast<unsigned>(ymd.day()));
}

Period bounded(std::string id, const date::time_zone& zone, LocalMs start, LocalMs end) {
  return Period{std::move(id), to_instant(zone, start), to_instant(zone, end)};
}

// Reads exactly `len` decimal digits at `pos`.
bool digits(std::string_view s, std::size_t pos, std::size_t len, int& out) {
  if (pos + len > s.size()) return false;
  for (std::size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return std::from_chars(s.data() + pos, s.data() + pos + len, out).ec == std::errc{};
}

// Parses "YYYY-MM-DD" at the front of s.
std::optional<date::local_days> parse_day(std::string_view s) {
  int y = 0, m = 0, d = 0;
  if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, m) || s[7] != '-' ||
      !digits(s, 8, 2, d)) {
    return std::nullopt;
  }
  const date::year_month_day ymd{date::year{y}, date::month{static_cast<unsigned>(m)},
                                 date::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  return date::local_days{ymd};
}

Period cycle_containing(const PeriodSpec& spec, const date::time_zone& zone, Instant t);

// A candidate start's containing cycle, if its id is the one asked for.
std::optional<Period> confirm(const PeriodSpec& spec, const date::time_zone& zone, LocalMs start,
                              std::string_view id) {
  const Instant at = to_instant(zone, start);
  if (spec.kind == PeriodKind::alltime) return std::nullopt;
  try {
    Period p = cycle_containing(spec, zone, at);
    if (p.id == id) return p;
  } catch (const RefusedError&) {
  }
  return std::nullopt;
}

}  // namespace

std::optional<PeriodKind> parse_period_kind(std::string_view name) {
  for (const auto& [text, kind] : kKinds) {
    if (text == name) return kind;
  }
  return std::nullopt;
}

std::string_view period_kind_name(PeriodKind kind) {
  for (const auto& [text, k] : kKinds) {
    if (k == kind) return text;
  }
  return "custom";
}

namespace {

// The period named by the local wall time of t (its hour, day, week...).
Period period_of_local_time(const PeriodSpec& spec, const date::time_zone& zone, Instant t) {
  const LocalMs local = zone.to_local(t);
  const date::local_days day = date::floor<date::days>(local);
  switch (spec.kind) {
    case PeriodKind::hourly: {
      const LocalMs hour = date::floor<hours>(local);
      const auto h = static_cast<unsigned>((hour - local_of(day)) / hours{1});
      return bounded(day_id(day) + "T" + two(h), zone, hour, hour + hours{1});
    }
    case PeriodKind::daily:
      return bounded(day_id(day), zone, local_of(day), local_of(day + date::days{1}));
    case PeriodKind::weekly: {
      const iso_week::year_weeknum_weekday iw{day};
      const date::local_days monday{
          iso_week::year_weeknum_weekday{iw.year(), iw.weeknum(), iso_week::mon}};
      return bounded(
          four(static_cast<int>(iw.year())) + "-W" + two(static_cast<unsigned>(iw.weeknum())), zone,
          local_of(monday), local_of(monday + date::days{7}));
    }
    case PeriodKind::monthly: {
      const date::year_month ym{date::year_month_day{day}.year(),
                                date::year_month_day{day}.month()};
      const date::local_days first{ym / 1};
      const date::local_days next{(ym + date::months{1}) / 1};
      return bounded(
          four(static_cast<int>(ym.year())) + "-" + two(static_cast<unsigned>(ym.month())), zone,
          local_of(first), local_of(next));
    }
    case PeriodKind::yearly: {
      const date::year y = date::year_month_day{day}.year();
      return bounded(four(static_cast<int>(y)), zone, local_of(date::local_days{y / 1 / 1}),
                     local_of(date::local_days{(y + date::years{1}) / 1 / 1}));
    }
    case PeriodKind::alltime: {
      Period all{"all", from_epoch_ms(kAlltimeStartMs), from_epoch_ms(kAlltimeEndMs)};
      if (t < all.start || t >= all.end) {
        throw RefusedError("time " + format_rfc3339(t) +
                           " is outside the alltime period (2020-01-01 to 2100-01-01)");
      }
      return all;
    }
    case PeriodKind::custom: {
      const auto start = spec.cron->last_firing_at_or_before(zone, t);
      const auto end = start ? spec.cron->next_firing_after(zone, *start) : std::nullopt;
      if (!start || !end) {
        throw RefusedError("no firing of period '" + spec.name + "' (cron \"" + spec.cron->text() +
                           "\") around " + format_rfc3339(t));
      }
      const LocalMs local_start = zone.to_local(*start);
      const date::local_days sday = date::floor<date::days>(local_start);
      const auto minutes =
          std::chrono::duration_cast<std::chrono::minutes>(local_start - local_of(sday));
      const auto hh = static_cast<unsigned>(minutes.count() / 60);
      const auto mm = static_cast<unsigned>(minutes.count() % 60);
      return Period{day_id(sday) + "T" + two(hh) + ":" + two(mm), *start, *end};
    }
  }
  throw Error("unknown period kind");
}

}  // namespace

namespace {

// The cycle containing t: the period as it would be without a window.
Period cycle_containing(const PeriodSpec& spec, const date::time_zone& zone, Instant t) {
  Period p = period_of_local_time(spec, zone, t);
  // When the clock goes back to a wall time before a boundary (Pacific/Chatham repeats
  // 02:45-03:45, so 03:00 exists twice), the repeated wall times just before the boundary
  // recur after the boundary's first occurrence, where the period ended: such an instant
  // belongs to the period that boundary starts.
  if (t >= p.end) return period_of_local_time(spec, zone, p.end);
  return p;
}

// The wall-clock time a cycle starts at: its calendar boundary (also when that wall time
// did not exist and the cycle started when the clock jumped), or a cron period's firing.
LocalMs cycle_wall_start(const PeriodSpec& spec, const date::time_zone& zone, const Period& c) {
  const LocalMs local = zone.to_local(c.start);
  switch (spec.kind) {
    case PeriodKind::hourly:
      return date::floor<hours>(local);
    case PeriodKind::daily:
    case PeriodKind::weekly:
    case PeriodKind::monthly:
    case PeriodKind::yearly:
      return local_of(date::floor<date::days>(local));
    case PeriodKind::alltime:
    case PeriodKind::custom:
      break;
  }
  return local;
}

// A cycle's window (the cycle itself for a period without one).
Period window_of(const PeriodSpec& spec, const date::time_zone& zone, Period cycle) {
  if (!spec.window) return cycle;
  const LocalMs start = cycle_wall_start(spec, zone, cycle) + spec.window->offset;
  Period w = bounded(std::move(cycle.id), zone, start, start + spec.window->length);
  if (spec.kind == PeriodKind::custom && w.end > cycle.end) w.end = cycle.end;
  return w;
}

// The window of the cycle before `cycle`, if there is one.
std::optional<Period> window_before(const PeriodSpec& spec, const date::time_zone& zone,
                                    const Period& cycle) {
  try {
    return window_of(spec, zone, cycle_containing(spec, zone, cycle.start - Millis{1}));
  } catch (const RefusedError&) {
    return std::nullopt;  // no earlier firing
  }
}

bool inside(const Period& p, Instant t) {
  return t >= p.start && t < p.end;
}

}  // namespace

Period period_containing(const PeriodSpec& spec, const date::time_zone& zone, Instant t) {
  Period cycle = cycle_containing(spec, zone, t);
  if (!spec.window) return cycle;
  Period w = window_of(spec, zone, cycle);
  if (inside(w, t)) return w;
  if (t < w.start) {
    // A window that starts late in its cycle may run into the next one.
    if (auto before = window_before(spec, zone, cycle)) {
      if (inside(*before, t)) return *before;
    }
  }
  throw RefusedError("time " + format_rfc3339(t) + " is between two windows of period '" +
                     spec.name + "'; the next window starts at " +
                     format_rfc3339(next_period(spec, zone, t).start));
}

Period next_period(const PeriodSpec& spec, const date::time_zone& zone, Instant t) {
  const Period cycle = cycle_containing(spec, zone, t);
  Period w = window_of(spec, zone, cycle);
  if (w.start > t) return w;
  return window_of(spec, zone, cycle_containing(spec, zone, cycle.end));
}

Period period_latest(const PeriodSpec& spec, const date::time_zone& zone, Instant t) {
  const Period cycle = cycle_containing(spec, zone, t);
  Period w = window_of(spec, zone, cycle);
  if (!spec.window || t >= w.start) return w;
  if (auto before = window_before(spec, zone, cycle)) return *before;
  return w;
}

namespace {

std::optional<Period> cycle_from_id(const PeriodSpec& spec, const date::time_zone& zone,
                                    std::string_view id) {
  switch (spec.kind) {
    case PeriodKind::hourly: {
      const auto day = parse_day(id);
      int h = 0;
      if (!day || id.size() != 13 || id[10] != 'T' || !digits(id, 11, 2, h) || h > 23) break;
      return confirm(spec, zone, local_of(*day) + hours{h}, id);
    }
    case PeriodKind::daily: {
      const auto day = parse_day(id);
      if (!day || id.size() != 10) break;
      return confirm(spec, zone, local_of(*day), id);
    }
    case PeriodKind::weekly: {
      int y = 0, w = 0;
      if (id.size() != 8 || !digits(id, 0, 4, y) || id.substr(4, 2) != "-W" ||
          !digits(id, 6, 2, w)) {
        break;
      }
      const iso_week::year_weeknum_weekday iw{
          iso_week::year{y}, iso_week::weeknum{static_cast<unsigned>(w)}, iso_week::mon};
      if (!iw.ok()) break;
      return confirm(spec, zone, local_of(date::local_days{iw}), id);
    }
    case PeriodKind::monthly: {
      int y = 0, m = 0;
      if (id.size() != 7 || !digits(id, 0, 4, y) || id[4] != '-' || !digits(id, 5, 2, m) || m < 1 ||
          m > 12) {
        break;
      }
      return confirm(
          spec, zone,
          local_of(date::local_days{date::year{y} / date::month{static_cast<unsigned>(m)} / 1}),
          id);
    }
    case PeriodKind::yearly: {
      int y = 0;
      if (id.size() != 4 || !digits(id, 0, 4, y)) break;
      return confirm(spec, zone, local_of(date::local_days{date::year{y} / 1 / 1}), id);
    }
    case PeriodKind::alltime:
      if (id == "all")
        return Period{"all", from_epoch_ms(kAlltimeStartMs), from_epoch_ms(kAlltimeEndMs)};
      break;
    case PeriodKind::custom: {
      const auto day = parse_day(id);
      int h = 0, m = 0;
      if (!day || id.size() != 16 || id[10] != 'T' || !digits(id, 11, 2, h) || id[13] != ':' ||
          !digits(id, 14, 2, m) || h > 23 || m > 59) {
        break;
      }
      return confirm(spec, zone, local_of(*day) + hours{h} + std::chrono::minutes{m}, id);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Period> period_from_id(const PeriodSpec& spec, const date::time_zone& zone,
                                     std::string_view id) {
  auto cycle = cycle_from_id(spec, zone, id);
  if (!cycle) return std::nullopt;
  return window_of(spec, zone, std::move(*cycle));
}

Millis longest_period(const PeriodSpec& spec, const date::time_zone& zone) {
  // Room for the largest DST shift in the tz database (Antarctica/Troll moves 2 hours).
  constexpr Millis slack = hours{3};
  switch (spec.kind) {
    case PeriodKind::hourly:
      return hours{1} + slack;
    case PeriodKind::daily:
      return hours{24} + slack;
    case PeriodKind::weekly:
      return hours{24 * 7} + slack;
    case PeriodKind::monthly:
      return hours{24 * 31} + slack;
    case PeriodKind::yearly:
      return hours{24 * 366} + slack;
    case PeriodKind::alltime:
      return Millis{kAlltimeEndMs - kAlltimeStartMs};
    case PeriodKind::custom:
      return spec.cron->longest_gap(zone) + slack;
  }
  return slack;
}

}  // namespace bk
