#include "core/league.h"

#include <algorithm>
#include <charconv>

namespace bk {

Seat decode_seat(std::int64_t score) {
  return {score / kSeatShift, score % kSeatShift};
}

std::int64_t cohort_number(std::int64_t place, std::int64_t size) {
  return (place - 1) / size + 1;
}

std::string cohort_name(const LeagueRules& league, const CohortId& id) {
  return league.divisions.at(static_cast<std::size_t>(id.division)) + "-" +
         std::to_string(id.number);
}

std::optional<CohortId> parse_cohort(const LeagueRules& league, std::string_view text) {
  const std::size_t dash = text.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const std::string_view name = text.substr(0, dash);
  const std::string_view digits = text.substr(dash + 1);
  const auto at = std::find(league.divisions.begin(), league.divisions.end(), name);
  if (at == league.divisions.end() || digits.empty() || digits.size() > 9 || digits[0] == '0') {
    return std::nullopt;
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return CohortId{at - league.divisions.begin(), n};
}

std::string_view zone_name(Zone zone) {
  switch (zone) {
    case Zone::promote:
      return "promote";
    case Zone::relegate:
      return "relegate";
    case Zone::stay:
      break;
  }
  return "stay";
}

Zone zone_of(const LeagueRules& league, std::int64_t division, std::int64_t better,
             std::int64_t worse) {
  const auto top = static_cast<std::int64_t>(league.divisions.size()) - 1;
  if (better < league.promote && division < top) return Zone::promote;
  if (worse < league.relegate && division > 0) return Zone::relegate;
  return Zone::stay;
}

}  // namespace bk
