// Printing results for people (aligned text) and for scripts (one JSON object per line,
// with the field names of the SQL view boardkeeper.history).
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "service/leaderboards.h"

namespace bk::cli {

using bk::json_string;
using bk::JsonLine;

// For text output: control characters shown as \n, \t, \x01 so one member stays one line.
std::string printable(std::string_view s);

std::string format_local(Instant t, const date::time_zone& zone);  // 2026-11-22T00:00:00+08:00

// "member 'x' is not on <board> <period> <id>" on stderr (rank, around: exit 1).
void print_not_on(const std::string& member, const service::PeriodRef& ref);

// Prints standings of one period: a header and a table, or JSON lines.
void print_standings(std::ostream& out, bool json, const service::PeriodRef& ref,
                     const std::vector<service::Standing>& rows);

// The same, page by page, for listings too long to hold: the header (text) with the first
// page, whose members set the column width.
class StandingsPrinter {
 public:
  StandingsPrinter(std::ostream& out, bool json, const service::PeriodRef& ref)
      : out_(out), json_(json), ref_(ref) {}
  void page(const std::vector<service::Standing>& rows);
  void finish();  // after the last page (text: says so when there were no rows)

 private:
  std::ostream& out_;
  bool json_;
  const service::PeriodRef& ref_;
  bool started_ = false;
  std::size_t width_ = 6;
  std::size_t tier_width_ = 4;  // "tier"
  void header();
  void json_lines(const std::vector<service::Standing>& rows);
  bool tiered() const { return !ref_.config->tiers.empty(); }
};

}  // namespace bk::cli
