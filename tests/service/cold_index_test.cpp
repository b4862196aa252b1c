// Cold ranks from memory (service/cold_index.h) without servers: the index answers every read
// of a cold snapshot as the counted path does (a property test against fake_tiers.h's
// snapshot, which counts row by row), the cache keeps the budget by dropping the least
// recently used period. (LiveReads over it: live_reads_test.cpp.)
#include "service/cold_index.h"

#include <gtest/gtest.h>

#include <random>

#include "fake_tiers.h"

namespace bk::service {
namespace {

using testing::FakePostgres;

const cold::PeriodKey kPeriod{"b", "daily", "2026-11-20"};

std::string random_member(std::mt19937_64& rng) {
  // Short names from a few bytes (ties of score meet ties of prefix), one byte above 0x7f:
  // listing order compares bytes unsigned, as COLLATE "C" does.
  static const std::string kBytes = "ab:\xc3\xbc z";
  std::string m;
  const auto n = 1 + rng() % 4;
  for (std::size_t i = 0; i < n; ++i) m += kBytes[rng() % kBytes.size()];
  return m;
}

// `rows` distinct members, scores from a narrow range (many ties).
std::vector<cold::ColdHit> random_rows(std::mt19937_64& rng, std::size_t rows) {
  std::map<std::string, std::int64_t> members;
  while (members.size() < rows) members[random_member(rng)] = static_cast<std::int64_t>(rng() % 40);
  std::vector<cold::ColdHit> out;
  for (const auto& [m, e] : members) out.push_back({m, e - 20, 0, std::nullopt, 0});
  std::sort(out.begin(), out.end(), [](const cold::ColdHit& a, const cold::ColdHit& b) {
    return listed_before({a.member, a.encoded}, {b.member, b.encoded});
  });
  return out;
}

using Keyed = std::vector<std::pair<std::string, std::int64_t>>;
Keyed keyed(const std::vector<cold::ColdHit>& rows) {
  Keyed out;
  for (const auto& r : rows) out.emplace_back(r.member, r.encoded);
  return out;
}

// Every read at one random key (a row's or one between rows) and limit, both ways.
void expect_same_at(ColdSnapshot& memory, ColdSnapshot& counted, std::mt19937_64& rng,
                    std::int64_t size) {
  const std::int64_t e = static_cast<std::int64_t>(rng() % 44) - 22;
  const std::string m = random_member(rng);
  const std::int64_t limit = static_cast<std::int64_t>(rng() % 6);
  const std::int64_t offset =
      static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(size + 3));
  SCOPED_TRACE("at (" + std::to_string(e) + ", " + m + ") limit " + std::to_string(limit) +
               " offset " + std::to_string(offset));
  EXPECT_EQ(memory.count(kPeriod), counted.count(kPeriod));
  EXPECT_EQ(memory.count_better(kPeriod, e), counted.count_better(kPeriod, e));
  EXPECT_EQ(memory.count_better(kPeriod, std::vector<std::int64_t>{e, e + 1}),
            counted.count_better(kPeriod, std::vector<std::int64_t>{e, e + 1}));
  EXPECT_EQ(memory.count_before(kPeriod, e, m), counted.count_before(kPeriod, e, m));
  EXPECT_EQ(keyed(memory.slice(kPeriod, offset, limit)),
            keyed(counted.slice(kPeriod, offset, limit)));
  EXPECT_EQ(memory.key_at(kPeriod, offset), counted.key_at(kPeriod, offset));
  EXPECT_EQ(keyed(memory.from(kPeriod, e, m, limit)), keyed(counted.from(kPeriod, e, m, limit)));
  EXPECT_EQ(keyed(memory.after(kPeriod, e, m, limit)), keyed(counted.after(kPeriod, e, m, limit)));
  EXPECT_EQ(keyed(memory.before(kPeriod, e, m, limit)),
            keyed(counted.before(kPeriod, e, m, limit)));
  const std::vector<std::string> asked{m, random_member(rng), m, random_member(rng)};
  EXPECT_EQ(keyed(memory.rows_for(kPeriod, asked)), keyed(counted.rows_for(kPeriod, asked)));
}

TEST(ColdIndexTest, EveryReadEqualsTheCountedPathOnRandomRows) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    FakePostgres db;
    db.rows[FakePostgres::name(kPeriod)] = random_rows(rng, seed % 7 == 0 ? 0 : 1 + rng() % 300);
    const auto counted = db.snapshot();
    // Read in pages as serve's loader does (pages of 20,000: one here, several for seed 40).
    const auto index = read_index(*counted, kPeriod, "7", std::size_t{1} << 30);
    ASSERT_NE(index, nullptr);
    const auto memory = snapshot_of(index);
    const std::int64_t size = counted->count(kPeriod);
    for (int i = 0; i < 200; ++i) expect_same_at(*memory, *counted, rng, size);
    // A row's own key, exactly.
    for (const auto& row : counted->slice(kPeriod, 0, size)) {
      ASSERT_EQ(memory->count_before(kPeriod, row.encoded, row.member),
                counted->count_before(kPeriod, row.encoded, row.member));
      ASSERT_EQ(keyed(memory->after(kPeriod, row.encoded, row.member, 2)),
                keyed(counted->after(kPeriod, row.encoded, row.member, 2)));
    }
  }
}

TEST(ColdIndexTest, ALoadOverTheBudgetGivesNoIndex) {
  std::mt19937_64 rng(3);
  FakePostgres db;
  db.rows[FakePostgres::name(kPeriod)] = random_rows(rng, 200);
  const auto counted = db.snapshot();
  EXPECT_EQ(read_index(*counted, kPeriod, "7", 2000), nullptr);
  const auto index = read_index(*counted, kPeriod, "7", 1 << 20);
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->size(), 200);
  EXPECT_GT(index->bytes(), 200u * 20);
}

TEST(ColdIndexTest, RowsOutOfListingOrderAreRefused) {
  ColdIndex index(kPeriod, "1");
  index.add("b", 5);
  EXPECT_THROW(index.add("a", 5), std::logic_error);
  EXPECT_THROW(index.add("c", 4), std::logic_error);
  EXPECT_THROW(index.add("b", 5), std::logic_error);
}

TEST(ColdIndexTest, TheSpillGenerationIsTheFirstPartAndZeroIsNone) {
  EXPECT_EQ(spill_generation("17:4"), "17");
  EXPECT_EQ(spill_generation("0:4"), "");
  EXPECT_EQ(spill_generation("1764000000123456:0"), "1764000000123456");
}

std::shared_ptr<const ColdIndex> index_of(const std::string& board, const std::string& gen,
                                          int rows) {
  auto index = std::make_shared<ColdIndex>(cold::PeriodKey{board, "daily", "x"}, gen);
  for (int i = 0; i < rows; ++i) index->add("m" + std::to_string(1000 + i), i);
  index->seal();
  return index;
}

TEST(ColdIndexesTest, TheLeastRecentlyUsedPeriodGoesFirstToKeepTheBudget) {
  const auto a = index_of("a", "1", 1000);
  ColdIndexes cache(a->bytes() * 2 + a->bytes() / 2);  // room for two of these
  const PeriodRef ref;
  cache.install("a", a);
  cache.install("b", index_of("b", "1", 1000));
  ASSERT_NE(cache.find(ref, "a", "1"), nullptr);  // a is used: b is now the oldest
  cache.install("c", index_of("c", "1", 1000));
  EXPECT_NE(cache.find(ref, "a", "1"), nullptr);
  EXPECT_EQ(cache.find(ref, "b", "1"), nullptr);
  EXPECT_NE(cache.find(ref, "c", "1"), nullptr);
  const auto stats = cache.stats();
  EXPECT_EQ(stats.periods, 2u);
  EXPECT_EQ(stats.evictions, 1);
  EXPECT_LE(stats.bytes, cache.budget());
}

TEST(ColdIndexesTest, AnotherGenerationIsAMissThatAsksForOneLoad) {
  ColdIndexes cache(std::size_t{1} << 20);
  PeriodRef ref;
  ref.board = "a";
  cache.install("a", index_of("a", "1", 10));
  EXPECT_EQ(cache.find(ref, "a", "2"), nullptr);  // spilled again: generation 1 is dropped
  EXPECT_EQ(cache.find(ref, "a", "2"), nullptr);
  EXPECT_EQ(cache.stats().periods, 0u);
  const auto asked = cache.next(std::chrono::milliseconds(0));
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->board, "a");
  EXPECT_FALSE(cache.next(std::chrono::milliseconds(0))) << "asked once";
}

TEST(ColdIndexesTest, AReadOfAnOlderGenerationLeavesTheNewerIndexKept) {
  ColdIndexes cache(std::size_t{1} << 20);
  const PeriodRef ref;
  cache.install("a", index_of("a", "1764000000000010", 10));
  EXPECT_EQ(cache.find(ref, "a", "1764000000000009"), nullptr);  // began before the spill
  EXPECT_FALSE(cache.next(std::chrono::milliseconds(0))) << "nothing to load for it";
  EXPECT_NE(cache.find(ref, "a", "1764000000000010"), nullptr);
  EXPECT_TRUE(older_generation("9", "10"));
  EXPECT_FALSE(older_generation("10", "9"));
  EXPECT_FALSE(older_generation("10", "10"));
}

TEST(ColdIndexTest, AMembersRowIsFoundByNameWhateverTheNames) {
  ColdIndex index(kPeriod, "1");
  const std::vector<std::string> names{"z", "a", "\xc3\xbc", "a:b", "", "b"};
  for (std::size_t i = 0; i < names.size(); ++i) index.add(names[i], static_cast<std::int64_t>(i));
  index.seal();
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(index.find(names[i]), static_cast<std::int64_t>(i)) << names[i];
  }
  EXPECT_FALSE(index.find("c"));
  EXPECT_FALSE(index.find("a:"));
}

TEST(ColdIndexesTest, AGenerationTooLargeOrAFailedLoadIsNotAskedAgainAtOnce) {
  ColdIndexes cache(std::size_t{1} << 20);
  const PeriodRef ref;
  EXPECT_EQ(cache.find(ref, "big", "5"), nullptr);
  ASSERT_TRUE(cache.next(std::chrono::milliseconds(0)));
  cache.not_loaded("big", "5", ColdIndexes::Outcome::too_large);
  EXPECT_EQ(cache.find(ref, "big", "5"), nullptr);
  EXPECT_FALSE(cache.next(std::chrono::milliseconds(0)));
  EXPECT_EQ(cache.find(ref, "big", "6"), nullptr);  // the next generation may fit
  ASSERT_TRUE(cache.next(std::chrono::milliseconds(0)));
  cache.not_loaded("big", "6", ColdIndexes::Outcome::failed);
  EXPECT_EQ(cache.find(ref, "big", "6"), nullptr);
  EXPECT_FALSE(cache.next(std::chrono::milliseconds(0)));
  EXPECT_EQ(cache.stats().failures, 1);
}

TEST(ColdIndexesTest, StopEndsTheLoadersWait) {
  ColdIndexes cache(1024);
  cache.stop();
  EXPECT_FALSE(cache.next(std::chrono::hours(1)));
}

}  // namespace
}  // namespace bk::service
