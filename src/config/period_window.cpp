// A named period's window: {name, period: weekly, starts: "sat 00:00", duration: 48h} runs
// for part of each week; {name, cron: "0 18 * * *", duration: 1h} for part of each cron
// cycle (core/period.h PeriodWindow says how its bounds fall).
#include <array>
#include <charconv>

#include "config/loader.h"
#include "core/duration.h"

namespace bk::config_detail {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

constexpr std::array<std::string_view, 7> kWeekdays{"mon", "tue", "wed", "thu",
                                                    "fri", "sat", "sun"};

// The shortest cycle of each kind a window may have, and how `starts` is written for it.
struct WindowKind {
  PeriodKind kind;
  Millis shortest;
  std::string_view starts;  // the spelling, for messages
};
constexpr std::array<WindowKind, 3> kWindowKinds{{
    {PeriodKind::daily, hours{24}, "\"HH:MM\" (e.g. \"18:00\")"},
    {PeriodKind::weekly, hours{24 * 7}, "\"DAY HH:MM\" (e.g. \"sat 00:00\"; mon to sun)"},
    {PeriodKind::monthly, hours{24 * 28}, "\"D HH:MM\" (e.g. \"15 00:00\"; day 1 to 28)"},
}};

const WindowKind* window_kind(PeriodKind kind) {
  for (const WindowKind& w : kWindowKinds) {
    if (w.kind == kind) return &w;
  }
  return nullptr;
}

bool number(std::string_view text, int lo, int hi, int& out) {
  if (text.empty() || text.size() > 2) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && out >= lo && out <= hi;
}

// "HH:MM" as a time of day.
std::optional<Millis> time_of_day(std::string_view text) {
  int h = 0, m = 0;
  if (text.size() != 5 || text[2] != ':' || !number(text.substr(0, 2), 0, 23, h) ||
      !number(text.substr(3, 2), 0, 59, m)) {
    return std::nullopt;
  }
  return Millis{hours{h}} + Millis{minutes{m}};
}

// Where in its cycle a window of `kind` starts, as written in `starts`.
std::optional<Millis> window_offset(PeriodKind kind, std::string_view text) {
  if (kind == PeriodKind::daily) return time_of_day(text);
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto day_part = text.substr(0, space);
  const auto time = time_of_day(text.substr(space + 1));
  if (!time) return std::nullopt;
  int day = 0;
  if (kind == PeriodKind::weekly) {
    for (std::size_t i = 0; i < kWeekdays.size(); ++i) {
      if (kWeekdays[i] == day_part) return Millis{hours{24 * static_cast<int>(i)}} + *time;
    }
    return std::nullopt;
  }
  if (!number(day_part, 1, 28, day)) return std::nullopt;
  return Millis{hours{24 * (day - 1)}} + *time;
}

}  // namespace

std::optional<PeriodKind> Loader::read_window_kind(const Entry& entry) {
  const auto text = read_string(entry, "period");
  if (!text) return std::nullopt;
  const auto kind = parse_period_kind(*text);
  if (!kind || !window_kind(*kind)) {
    report(entry, "a window's period must be daily, weekly or monthly, not " + quoted(*text) +
                      " (a window of a cron period: {name: NAME, cron: \"0 18 * * *\", "
                      "duration: 1h})");
    return std::nullopt;
  }
  return kind;
}

void Loader::parse_period_window(const Fields& f, const yaml::Node& node, PeriodSpec& spec) {
  const auto period = f.get("period");
  const auto starts = f.get("starts");
  const auto duration = f.get("duration");
  if (period && f.get("cron")) {
    report(*period, "a named period has either 'cron' or 'period', not both");
    return;
  }
  if (!period && starts) {
    report(*starts,
           "'starts' is for a window of a fixed period (period: daily, weekly or "
           "monthly); a cron period's window starts at each firing");
    return;
  }
  PeriodWindow window;
  const WindowKind* kind = nullptr;
  if (period) {
    const auto k = read_window_kind(*period);
    if (!k) return;
    spec.kind = *k;
    kind = window_kind(*k);
    if (!duration) {
      report(node, "a window of a " + std::string(period_kind_name(*k)) +
                       " period needs 'duration' (e.g. duration: 2h); for the whole period "
                       "list " +
                       std::string(period_kind_name(*k)) + " itself");
      return;
    }
    if (starts) {
      const auto text = read_string(*starts, "starts");
      if (!text) return;
      const auto offset = window_offset(*k, *text);
      if (!offset) {
        report(*starts, "starts " + quoted(*text) + " is not a start in a " +
                            std::string(period_kind_name(*k)) + " period; write " +
                            std::string(kind->starts));
        return;
      }
      window.offset = *offset;
    }
  }
  if (!duration) return;  // a cron period without a window
  const auto length = read_duration(*duration, "duration");
  if (!length) return;
  if (length->count() <= 0) {
    report(*duration, "a window's duration must be above 0");
    return;
  }
  if (kind && *length > kind->shortest) {
    report(*duration, "duration " + format_duration(*length) + " is longer than the shortest " +
                          std::string(period_kind_name(kind->kind)) + " period (" +
                          format_duration(kind->shortest) + "): windows would overlap");
    return;
  }
  window.length = *length;
  spec.window = window;
}

}  // namespace bk::config_detail
