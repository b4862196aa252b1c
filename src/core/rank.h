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

// Where a slice of a listing begins: the 0-based position of its first entry and that
// entry's competition rank (1 + the number of members strictly better), which is smaller
// than position + 1 when the slice starts inside a group of equal scores.
struct SliceStart {
  std::int64_t position = 0;
  std::int64_t rank = 1;
};

// Competition ranks ("1224") of a slice of entries in listing order: an entry whose score
// differs from the one before it has every earlier entry strictly better than it.
std::vector<std::int64_t> competition_ranks(const std::vector<ScoredMember>& listed,
                                            SliceStart start);

}  // namespace bk
