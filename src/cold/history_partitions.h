// The monthly partitions of history_rows (sql/002_history.sql): a period's rows live in the
// partition of the month its period starts in. Pure: names and ranges only.
#pragma once
#include <date/date.h>

#include <string>

#include "core/time.h"

namespace bk::cold {

// The history partition of one month (period starts in [from, to)).
struct Month {
  std::string partition;  // "<schema>.history_rows_yYYYYmMM", the schema quoted
  Instant from, to;
};

// `q`: the schema quoted as an identifier.
Month month_of(const std::string& q, date::year_month month);
date::year_month month_containing(Instant t);

}  // namespace bk::cold
