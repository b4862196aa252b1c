// Listing order and competition ranks, checked against the definition "1 + the number of
// members strictly better".
#include "core/rank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace bk {
namespace {

std::vector<ScoredMember> with_scores(const std::vector<std::int64_t>& scores) {
  std::vector<ScoredMember> out;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    out.push_back({"m" + std::to_string(i), scores[i]});
  }
  return out;
}

using Ranks = std::vector<std::int64_t>;

const SliceStart kTop{0, 1};

TEST(CompetitionRanks, SharedRanksSkipTheNext) {
  EXPECT_EQ(competition_ranks(with_scores({10, 20, 20, 30}), kTop), (Ranks{1, 2, 2, 4}));
  EXPECT_EQ(competition_ranks(with_scores({10, 10, 10, 11, 12, 12}), kTop),
            (Ranks{1, 1, 1, 4, 5, 5}));
  EXPECT_EQ(competition_ranks(with_scores({7, 7, 7}), kTop), (Ranks{1, 1, 1}));
  EXPECT_EQ(competition_ranks(with_scores({1, 2, 3}), kTop), (Ranks{1, 2, 3}));
  EXPECT_EQ(competition_ranks(with_scores({5}), kTop), (Ranks{1}));
  EXPECT_EQ(competition_ranks({}, kTop), Ranks{});
}

TEST(CompetitionRanks, SlicesStartAtTheirFirstRank) {
  // A slice starting at position 10 whose first entry has rank 11 (10 members are better).
  EXPECT_EQ(competition_ranks(with_scores({10, 20, 20, 30}), SliceStart{10, 11}),
            (Ranks{11, 12, 12, 14}));
  // Listing 10, 40, 40, 40, 41 sliced from position 2: it starts inside the group of 40s,
  // which has rank 2; the 41 after it has rank 5.
  EXPECT_EQ(competition_ranks(with_scores({40, 40, 41}), SliceStart{2, 2}), (Ranks{2, 2, 5}));
  EXPECT_EQ(competition_ranks(with_scores({40, 41}), SliceStart{3, 2}), (Ranks{2, 5}));
}

TEST(ListedBefore, ScoreThenMemberBytes) {
  EXPECT_TRUE(listed_before({"z", 1}, {"a", 2}));
  EXPECT_FALSE(listed_before({"a", 2}, {"z", 1}));
  EXPECT_TRUE(listed_before({"a", 5}, {"b", 5}));
  EXPECT_TRUE(listed_before({"A", 5}, {"a", 5}));
  EXPECT_TRUE(listed_before({"a", 5}, {"ab", 5}));
  EXPECT_TRUE(listed_before({"9", 5}, {"A", 5}));
  // Bytes >= 0x80 come after ASCII, as in Redis (memcmp order).
  EXPECT_TRUE(listed_before({"~", 5}, {"\xc3\xa9", 5}));  // é
  EXPECT_TRUE(listed_before({"\x7f", 5}, {"\x80", 5}));
  EXPECT_TRUE(listed_before({"zzz", 5}, {"\xe4\xb8\xad", 5}));  // 中
  EXPECT_TRUE(listed_before({"\xc3\xa9", 5}, {"\xe4\xb8\xad", 5}));
  EXPECT_FALSE(listed_before({"\xc3\xa9", 5}, {"~", 5}));
  // Irreflexive.
  EXPECT_FALSE(listed_before({"a", 5}, {"a", 5}));
}

TEST(ListedBefore, SortsAMixedBoard) {
  std::vector<ScoredMember> board = {
      {"\xf0\x9f\x98\x80", 3},
      {"bob", 3},
      {"Bob", 3},
      {"alice", 1},
      {"zed", 2},
      {"", 3},
      {"b\x80", 3},
      {"b", 3},
  };
  std::sort(board.begin(), board.end(), listed_before);
  std::vector<std::string> order;
  for (const auto& m : board) order.push_back(m.member);
  // "b\x80" after "bob": 0x80 is above 'o'.
  EXPECT_EQ(order, (std::vector<std::string>{"alice", "zed", "", "Bob", "b", "bob", "b\x80",
                                             "\xf0\x9f\x98\x80"}));
}

// Random boards: sorting with listed_before and ranking gives, for every member, 1 + the
// number of members with a strictly smaller encoded score.
TEST(CompetitionRanks, MatchTheDefinitionOnRandomBoards) {
  std::mt19937_64 rng(1224);
  for (int round = 0; round < 200; ++round) {
    const int n = std::uniform_int_distribution<int>(1, 60)(rng);
    std::uniform_int_distribution<std::int64_t> score(0, round % 2 ? 5 : 1000);
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<ScoredMember> board;
    for (int i = 0; i < n; ++i) {
      std::string member = std::to_string(i) + ":";
      for (int k = 0; k < 3; ++k) member.push_back(static_cast<char>(byte(rng)));
      board.push_back({member, score(rng)});
    }
    std::shuffle(board.begin(), board.end(), rng);
    std::sort(board.begin(), board.end(), listed_before);
    for (std::size_t i = 1; i < board.size(); ++i) {
      ASSERT_FALSE(listed_before(board[i], board[i - 1]));
      if (board[i].encoded == board[i - 1].encoded) {
        // Equal scores: unsigned byte order.
        const auto& a = board[i - 1].member;
        const auto& b = board[i].member;
        ASSERT_TRUE(std::lexicographical_compare(
            a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
              return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
            }));
      }
    }
    // Any page of the listing, ranked from its first entry's true rank.
    const std::size_t from = std::uniform_int_distribution<std::size_t>(0, board.size() - 1)(rng);
    const std::vector<ScoredMember> page(board.begin() + static_cast<std::ptrdiff_t>(from),
                                         board.end());
    const auto rank_of = [&](const ScoredMember& m) {
      return 1 + std::count_if(board.begin(), board.end(),
                               [&](const ScoredMember& o) { return o.encoded < m.encoded; });
    };
    const Ranks ranks =
        competition_ranks(page, SliceStart{static_cast<std::int64_t>(from), rank_of(page.front())});
    ASSERT_EQ(ranks.size(), page.size());
    for (std::size_t i = 0; i < page.size(); ++i) {
      ASSERT_EQ(ranks[i], rank_of(page[i])) << "round " << round << " entry " << i;
    }
  }
}

}  // namespace
}  // namespace bk
