// Listing order and competition ranks.
#include "core/rank.h"

namespace bk {

bool listed_before(const ScoredMember& a, const ScoredMember& b) {
  if (a.encoded != b.encoded) return a.encoded < b.encoded;
  // std::string compares as unsigned bytes, which is Redis' order for equal scores.
  return a.member < b.member;
}

std::vector<std::int64_t> competition_ranks(const std::vector<ScoredMember>& listed,
                                            std::int64_t first_rank) {
  std::vector<std::int64_t> ranks;
  ranks.reserve(listed.size());
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (i > 0 && listed[i].encoded == listed[i - 1].encoded) {
      ranks.push_back(ranks.back());
    } else {
      ranks.push_back(first_rank + static_cast<std::int64_t>(i));
    }
  }
  return ranks;
}

}  // namespace bk
