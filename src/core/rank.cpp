// Listing order and competition ranks.
#include "core/rank.h"

namespace bk {

bool listed_before(const ScoredMember& a, const ScoredMember& b) {
  if (a.encoded != b.encoded) return a.encoded < b.encoded;
  // std::string compares as unsigned bytes, which is Redis' order for equal scores.
  return a.member < b.member;
}

std::vector<std::int64_t> competition_ranks(const std::vector<ScoredMember>& listed,
                                            SliceStart start) {
  std::vector<std::int64_t> ranks;
  ranks.reserve(listed.size());
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (i == 0) {
      ranks.push_back(start.rank);
    } else if (listed[i].encoded == listed[i - 1].encoded) {
      ranks.push_back(ranks.back());
    } else {
      ranks.push_back(start.position + static_cast<std::int64_t>(i) + 1);
    }
  }
  return ranks;
}

}  // namespace bk
