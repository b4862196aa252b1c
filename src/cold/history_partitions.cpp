// Names and ranges of the monthly history partitions (see history_partitions.h).
#include "cold/history_partitions.h"

#include <cstdio>

namespace bk::cold {

Month month_of(const std::string& q, date::year_month month) {
  using namespace date;
  char name[64];
  std::snprintf(name, sizeof name, "history_rows_y%04dm%02u", static_cast<int>(month.year()),
                static_cast<unsigned>(month.month()));
  return {q + "." + name, Instant{sys_days{month / 1}.time_since_epoch()},
          Instant{sys_days{(month + months{1}) / 1}.time_since_epoch()}};
}

date::year_month month_containing(Instant t) {
  const date::year_month_day ymd{date::floor<date::days>(t)};
  return ymd.year() / ymd.month();
}

}  // namespace bk::cold
