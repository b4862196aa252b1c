// Five-field cron expressions on a zone's wall clock.
//
// Firing instants are found day by day over local dates: a local date either matches the
// day fields or not, and a matching date fires at every (hour, minute) of the time fields.
// Mapping a local time to an instant with choose::earliest sends a time in a DST gap to the
// transition instant and a repeated time to its first occurrence, and it is monotone: a
// later wall time never maps to an earlier instant. So within one day the firing instants
// are sorted (some may coincide, which counts once) and can be binary searched.
#include "core/cron.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"

namespace bk {
namespace {

using LocalMinutes = date::local_time<std::chrono::minutes>;

// How far next/last firing searches look: long enough for a February 29th schedule to
// fire again across a non-leap century year (e.g. 2096 -> 2104).
constexpr date::days kHorizon{8 * 366 + 1};

// longest_gap looks at the firings of this window.
constexpr date::local_days kGapScanStart{date::year{2024} / 1 / 1};
constexpr date::days kGapScanLength{8 * 365 + 2};  // 2024-01-01 to 2032-01-01

struct FieldDef {
  const char* name;
  int min;
  int max;
};

constexpr FieldDef kFields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23},       {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

class FieldParser {
 public:
  FieldParser(std::string_view expression, const FieldDef& def, std::string_view text)
      : expression_(expression), def_(def), text_(text) {}

  // The values the field selects, as bits indexed by value (max + 1 bits).
  std::vector<bool> parse() const {
    std::vector<bool> bits(static_cast<std::size_t>(def_.max + 1), false);
    std::size_t pos = 0;
    while (true) {
      const std::size_t comma = text_.find(',', pos);
      const std::string_view element =
          text_.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
      parse_element(element, bits);
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    return bits;
  }

 private:
  std::string_view expression_;
  const FieldDef& def_;
  std::string_view text_;

  [[noreturn]] void fail(std::string_view element, const std::string& problem) const {
    std::string msg = "cron \"" + std::string(expression_) + "\": " + def_.name + " field \"" +
                      std::string(text_) + "\"";
    if (element != text_) msg += ": \"" + std::string(element) + "\"";
    throw UsageError(msg + " " + problem);
  }

  std::string range_text() const {
    return std::to_string(def_.min) + "-" + std::to_string(def_.max);
  }

  // A plain decimal number; anything else (names, signs, blanks) is refused.
  int number(std::string_view element, std::string_view digits) const {
    if (digits.empty()) fail(element, "is not a number, range or step (e.g. 5, 1-5, */15)");
    for (const char c : digits) {
      if (c < '0' || c > '9') {
        fail(element, "is not a number, range or step (e.g. 5, 1-5, */15; names are not accepted)");
      }
    }
    const std::string_view trimmed =
        digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    if (trimmed.size() > 4) fail(element, "is out of range " + range_text());
    int v = 0;
    for (const char c : trimmed) v = v * 10 + (c - '0');
    return v;
  }

  int in_range(std::string_view element, int v) const {
    if (v < def_.min || v > def_.max) fail(element, "is out of range " + range_text());
    return v;
  }

  void parse_element(std::string_view element, std::vector<bool>& bits) const {
    if (element.empty()) fail(element, "has an empty list element");
    const std::size_t slash = element.find('/');
    const std::string_view base = element.substr(0, slash);
    int step = 1;
    if (slash != std::string_view::npos) {
      step = number(element, element.substr(slash + 1));
      if (step < 1 || step > def_.max) {
        fail(element,
             "has a step of " + std::to_string(step) + ", outside 1-" + std::to_string(def_.max));
      }
    }
    int lo = def_.min;
    int hi = def_.max;
    if (base != "*") {
      const std::size_t dash = base.find('-');
      if (dash == std::string_view::npos) {
        lo = in_range(element, number(element, base));
        // "N/S" means N through the maximum, every S.
        hi = slash == std::string_view::npos ? lo : def_.max;
      } else {
        lo = in_range(element, number(element, base.substr(0, dash)));
        hi = in_range(element, number(element, base.substr(dash + 1)));
        if (lo > hi) {
          fail(element, "is a range whose start " + std::to_string(lo) + " is above its end " +
                            std::to_string(hi));
        }
      }
    }
    for (int v = lo; v <= hi; v += step) bits[static_cast<std::size_t>(v)] = true;
  }
};

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i == s.size()) break;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

Instant to_instant(const date::time_zone& zone, date::local_days day, int minute_of_day) {
  const LocalMinutes local =
      LocalMinutes{day.time_since_epoch()} + std::chrono::minutes{minute_of_day};
  return std::chrono::time_point_cast<Millis>(zone.to_sys(local, date::choose::earliest));
}

}  // namespace

CronSchedule CronSchedule::parse(std::string_view expression) {
  const std::vector<std::string_view> fields = split_fields(expression);
  if (fields.size() != 5) {
    throw UsageError("cron \"" + std::string(expression) +
                     "\": expected 5 fields (minute hour day-of-month month day-of-week), got " +
                     std::to_string(fields.size()));
  }
  CronSchedule s;
  s.text_ = std::string(expression);
  std::vector<bool> bits[5];
  for (std::size_t f = 0; f < 5; ++f) {
    bits[f] = FieldParser(expression, kFields[f], fields[f]).parse();
  }
  for (std::size_t v = 0; v < 60; ++v) s.minutes_[v] = bits[0][v];
  for (std::size_t v = 0; v < 24; ++v) s.hours_[v] = bits[1][v];
  for (std::size_t v = 1; v <= 31; ++v) s.days_of_month_[v] = bits[2][v];
  for (std::size_t v = 1; v <= 12; ++v) s.months_[v] = bits[3][v];
  for (std::size_t v = 0; v <= 7; ++v) {
    if (bits[4][v]) s.days_of_week_[v % 7] = true;
  }
  // As in Vixie cron, a day field that starts with "*" (also "*/2") does not restrict.
  s.dom_restricted_ = fields[2].front() != '*';
  s.dow_restricted_ = fields[4].front() != '*';
  return s;
}

bool CronSchedule::day_matches(date::sys_days day) const {
  const date::year_month_day ymd{day};
  if (!months_[static_cast<unsigned>(ymd.month())]) return false;
  const bool dom = days_of_month_[static_cast<unsigned>(ymd.day())];
  const bool dow = days_of_week_[date::weekday{day}.c_encoding()];
  if (dom_restricted_ && dow_restricted_) return dom || dow;
  return dom && dow;
}

namespace {

// The firing times of a matching day, as minutes after local midnight, ascending.
std::vector<int> times_of_day(const std::bitset<24>& hours, const std::bitset<60>& minutes) {
  std::vector<int> out;
  for (int h = 0; h < 24; ++h) {
    if (!hours[static_cast<std::size_t>(h)]) continue;
    for (int m = 0; m < 60; ++m) {
      if (minutes[static_cast<std::size_t>(m)]) out.push_back(h * 60 + m);
    }
  }
  return out;
}

date::local_days local_day_of(const date::time_zone& zone, Instant t) {
  return date::floor<date::days>(zone.to_local(t));
}

date::sys_days as_sys(date::local_days d) {
  return date::sys_days{d.time_since_epoch()};
}

}  // namespace

std::optional<Instant> CronSchedule::next_firing_after(const date::time_zone& zone,
                                                       Instant t) const {
  const std::vector<int> tod = times_of_day(hours_, minutes_);
  // A firing on an earlier local date than t's maps to an instant <= t (monotone mapping).
  const date::local_days first = local_day_of(zone, t);
  for (date::local_days d = first; d <= first + kHorizon; d += date::days{1}) {
    if (!day_matches(as_sys(d)) || to_instant(zone, d, tod.back()) <= t) continue;
    // The first firing of the day after t.
    std::size_t lo = 0, hi = tod.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (to_instant(zone, d, tod[mid]) > t) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return to_instant(zone, d, tod[lo]);
  }
  return std::nullopt;
}

std::optional<Instant> CronSchedule::last_firing_at_or_before(const date::time_zone& zone,
                                                              Instant t) const {
  const std::vector<int> tod = times_of_day(hours_, minutes_);
  // In a repeated hour (fall back) a wall time later than t's may be an earlier instant, even
  // on the next local date when the clock goes back across midnight; two days cover that.
  const date::local_days first = local_day_of(zone, t) + date::days{2};
  for (date::local_days d = first; d >= first - kHorizon; d -= date::days{1}) {
    if (!day_matches(as_sys(d)) || to_instant(zone, d, tod.front()) > t) continue;
    // The last firing of the day at or before t.
    std::size_t lo = 0, hi = tod.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (to_instant(zone, d, tod[mid]) <= t) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return to_instant(zone, d, tod[lo]);
  }
  return std::nullopt;
}

// Scans the firings of 2024-01-01 to 2032-01-01 on the zone's wall clock. Rather than
// walking every firing (a "* * * * *" schedule has millions), it looks at each matching day
// once: the gap from the previous day's last firing to this day's first, and the day's
// largest gap between consecutive times of day, which only differs from the nominal one on
// a day with a UTC offset change, where the day's firings are walked one by one. Over eight
// years every calendar pattern (weekdays, month lengths, leap days) and DST rule of the
// zone occurs. A schedule that fires at most once in the window gets the window's length.
Millis CronSchedule::longest_gap(const date::time_zone& zone) const {
  const std::vector<int> tod = times_of_day(hours_, minutes_);
  Millis nominal{0};
  for (std::size_t i = 1; i < tod.size(); ++i) {
    nominal = std::max<Millis>(nominal, std::chrono::minutes{tod[i] - tod[i - 1]});
  }
  std::optional<Instant> previous;
  Millis longest{0};
  bool any_gap = false;
  const date::local_days end = kGapScanStart + kGapScanLength;
  for (date::local_days d = kGapScanStart; d < end; d += date::days{1}) {
    if (!day_matches(as_sys(d))) continue;
    const Instant day_first = to_instant(zone, d, tod.front());
    const Instant day_last = to_instant(zone, d, tod.back());
    if (previous && day_first > *previous) {
      longest = std::max(longest, day_first - *previous);
      any_gap = true;
    }
    if (tod.size() > 1) {
      const date::sys_info info = zone.get_info(day_first);
      if (info.end <= day_last) {
        Instant prev = day_first;
        for (std::size_t i = 1; i < tod.size(); ++i) {
          const Instant at = to_instant(zone, d, tod[i]);
          if (at > prev) {
            longest = std::max(longest, at - prev);
            any_gap = true;
            prev = at;
          }
        }
      } else if (day_last > day_first) {
        longest = std::max(longest, nominal);
        any_gap = true;
      }
    }
    previous = day_last;
  }
  if (!any_gap) return std::chrono::duration_cast<Millis>(kGapScanLength);
  return longest;
}

}  // namespace bk
