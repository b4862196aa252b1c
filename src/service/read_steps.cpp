// The shared steps of merged reads.
#include "service/read_steps.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <thread>

namespace bk::service::read_steps {

void pause_before(int attempt) {
  if (attempt >= 3) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt, 60)));
}

Error inconsistent(const PeriodRef& ref) {
  return Error("could not read " + ref.board + " " + ref.spec->name + " " + ref.period.id +
               " consistently while spills kept running; try again");
}

void require_cold(const ColdTier& cold, const PeriodRef& ref) {
  if (cold.present()) return;
  throw Error("period " + ref.spec->name + ":" + ref.period.id + " of board '" + ref.board +
              "' has spilled to the cold tier; reading it needs PostgreSQL");
}

cold::PeriodKey cold_key(const PeriodRef& ref) {
  return {ref.board, ref.spec->name, ref.period.id};
}

std::vector<ScoredMember> merge(const std::vector<ScoredMember>& a,
                                const std::vector<ScoredMember>& b) {
  std::vector<ScoredMember> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), listed_before);
  return out;
}

std::vector<ScoredMember> without(const std::vector<cold::ColdHit>& rows,
                                  const std::set<std::string>& skip) {
  std::vector<ScoredMember> out;
  for (const auto& r : rows) {
    if (skip.count(r.member) == 0) out.push_back({r.member, r.encoded});
  }
  return out;
}

bool in_hot_part(const hot::ReadState& st, std::int64_t want) {
  return st.cold_bound && static_cast<std::int64_t>(st.head.size()) >= want && want > 0 &&
         st.head[static_cast<std::size_t>(want) - 1].encoded < *st.cold_bound;
}

}  // namespace bk::service::read_steps
