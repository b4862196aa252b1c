// Five-field cron expressions ("0 18 * * 5") evaluated on a time zone's wall clock, for
// named periods that run from one firing to the next.
#pragma once
#include <date/tz.h>

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"

namespace bk {

class CronSchedule {
 public:
  // Fields: minute hour day-of-month month day-of-week, each "*", a number, a range "a-b",
  // a step "*/n" or "a-b/n", or a comma list of those; day-of-week 0-7 with 0 and 7 Sunday.
  // Month and weekday names are not accepted. When both day fields are restricted a day
  // matches if either does (Vixie cron). Throws UsageError naming the offending field.
  static CronSchedule parse(std::string_view expression);

  // Firings are wall-clock times in `zone`. A firing that falls in a DST gap happens at the
  // instant the clock jumps; one that falls in a repeated hour happens at its first
  // occurrence. Firings that map to the same instant count once.
  std::optional<Instant> last_firing_at_or_before(const date::time_zone& zone, Instant t) const;
  std::optional<Instant> next_firing_after(const date::time_zone& zone, Instant t) const;
  // The longest time between two consecutive firings (looked at over several years), which
  // bounds the length of a period and so the score encoding's time span.
  Millis longest_gap(const date::time_zone& zone) const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // 1..31
  std::bitset<13> months_;         // 1..12
  std::bitset<7> days_of_week_;    // 0..6, Sunday = 0
  bool dom_restricted_ = false;
  bool dow_restricted_ = false;

  bool day_matches(date::sys_days day) const;
};

}  // namespace bk
