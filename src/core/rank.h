// The one ordering of a board, shared by Redis reads, the cold tier and the archive:
// encoded score ascending, then member bytes ascending. Rank is competition rank.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct ScoredMember {
  std::string member;
  std::int64_t encoded = 0;
};

// True when a is listed before b.
bool listed_before(const ScoredMember& a, const ScoredMember& b);

// Competition ranks ("1224") of entries already in listing order. `first_rank` is the rank
// of the first entry (1 + the number of members strictly better than it).
std::vector<std::int64_t> competition_ranks(const std::vector<ScoredMember>& listed,
                                            std::int64_t first_rank);

}  // namespace bk
