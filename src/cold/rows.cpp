// Checks and decoding shared by the cold tier's concerns (see rows.h).
#include "cold/rows.h"

#include "core/error.h"

namespace bk::cold {

void check_text(std::string_view what, const std::string& s) {
  if (s.find('\0') != std::string::npos) {
    throw RefusedError("the cold tier cannot store a " + std::string(what) +
                       " that contains a NUL byte");
  }
}

void check_period(const PeriodKey& p) {
  check_text("board", p.board);
  check_text("period", p.period);
  check_text("period id", p.period_id);
}

ColdHit hit_from(const pqxx::row& r, pqxx::row::size_type first) {
  ColdHit h;
  h.member = r[first].as<std::string>();
  h.encoded = r[first + 1].as<std::int64_t>();
  h.points = r[first + 2].as<std::int64_t>();
  if (!r[first + 3].is_null()) h.achieved_at = from_epoch_ms(r[first + 3].as<std::int64_t>());
  h.version = r[first + 4].as<std::int64_t>();
  return h;
}

std::vector<ColdHit> hits_from(const pqxx::result& res) {
  std::vector<ColdHit> out;
  out.reserve(res.size());
  for (const auto& r : res) out.push_back(hit_from(r, 0));
  return out;
}

}  // namespace bk::cold
