// What the tests of periods, windows and cron share: instants written as RFC 3339 and zones
// by name.
#pragma once
#include <date/tz.h>

#include <stdexcept>
#include <string>

#include "core/time.h"

namespace bk::zone_testing {

inline Instant at(const std::string& rfc3339) {
  const auto t = parse_rfc3339(rfc3339);
  if (!t) throw std::runtime_error("bad test time " + rfc3339);
  return *t;
}

inline const date::time_zone& tz(const char* name) {
  return *date::locate_zone(name);
}

}  // namespace bk::zone_testing
