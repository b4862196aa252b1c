// ColdReader against a brute-force model: listing order (encoded, then member bytes),
// counts, slices, neighbours, and the snapshot a reader keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "cold/cold_store.h"
#include "core/error.h"
#include "pg_test_util.h"

namespace bk::cold {
namespace {

class ColdReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<ColdStore>(test::postgres_url(), schema_.name());
    store_->migrate();
  }
  ColdStore& store() { return *store_; }

  test::TempSchema schema_;
  std::unique_ptr<ColdStore> store_;
};

const PeriodKey kDaily{"points", "daily", "2026-11-22"};
const PeriodKey kWeekly{"points", "weekly", "2026-W47"};

std::vector<std::string> members_of(const std::vector<ColdHit>& hits) {
  std::vector<std::string> out;
  out.reserve(hits.size());
  for (const auto& h : hits) out.push_back(h.member);
  return out;
}

TEST_F(ColdReaderTest, EqualScoresAreListedByMemberBytes) {
  // Bytewise: "B" (0x42) < "a" (0x61) < "b" < "é" (0xC3 0xA9) < "😀" (0xF0 ...);
  // a locale-aware collation would put "a" first and "é" next to "e".
  store().upsert(kDaily, {{"é", 5, 1, std::nullopt},
                          {"😀", 5, 1, std::nullopt},
                          {"b", 5, 1, std::nullopt},
                          {"B", 5, 1, std::nullopt},
                          {"e", 5, 1, std::nullopt},
                          {"a", 5, 1, std::nullopt},
                          {"z", 4, 1, std::nullopt},
                          {"A", 6, 1, std::nullopt}});
  auto r = store().reader();
  const std::vector<std::string> expected = {"z", "B", "a", "b", "e", "é", "😀", "A"};
  EXPECT_EQ(members_of(r.slice(kDaily, 0, 100)), expected);
  EXPECT_EQ(members_of(r.slice(kDaily, 2, 3)), (std::vector<std::string>{"a", "b", "e"}));
  EXPECT_EQ(r.count_before(kDaily, 5, "a"), 2);
  EXPECT_EQ(r.count_before(kDaily, 5, "é"), 5);
  EXPECT_EQ(r.count_better(kDaily, 5), 1);
  EXPECT_EQ(r.count_better(kDaily, std::vector<std::int64_t>{6, 4, 7, 5}),
            (std::vector<std::int64_t>{7, 0, 8, 1}));
  EXPECT_EQ(members_of(r.after(kDaily, 5, "b", 2)), (std::vector<std::string>{"e", "é"}));
  EXPECT_EQ(members_of(r.before(kDaily, 5, "b", 3)), (std::vector<std::string>{"a", "B", "z"}));
  EXPECT_EQ(members_of(r.rows_for(kDaily, {"😀", "nobody", "B", "A", "é"})),
            (std::vector<std::string>{"B", "é", "😀", "A"}));
  EXPECT_TRUE(r.slice(kDaily, 8, 10).empty());
  EXPECT_TRUE(r.slice(kDaily, 0, 0).empty());
  EXPECT_TRUE(r.after(kDaily, 6, "A", 10).empty());
  EXPECT_TRUE(r.before(kDaily, 4, "z", 10).empty());
  EXPECT_TRUE(r.rows_for(kDaily, {}).empty());
  EXPECT_EQ(r.count(kWeekly), 0);
}

// A period without cold rows has no counted pages: counting in it is 0, not an error (a
// merged read of a board Redis cannot vouch for asks before anything has spilled).
TEST_F(ColdReaderTest, CountsInAPeriodWithoutRowsAreZero) {
  store().upsert(kDaily, {{"a", 5, 1, std::nullopt}});
  auto r = store().reader();
  EXPECT_EQ(r.count_before(kWeekly, 5, "a"), 0);
  EXPECT_EQ(r.count_better(kWeekly, 5), 0);
  EXPECT_EQ(r.count_better(kWeekly, std::vector<std::int64_t>{5, 9}),
            (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(r.count_before(kDaily, 6, "a"), 1);
}

struct ModelRow {
  std::int64_t encoded = 0;
  std::string member;
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;
  bool operator<(const ModelRow& o) const {
    // std::string compares as unsigned bytes, like COLLATE "C".
    return encoded != o.encoded ? encoded < o.encoded : member < o.member;
  }
};

std::string random_member(std::mt19937_64& rng) {
  static const std::vector<std::string> kAlphabet = {"a", "b",  "A", "Z",  "0",  "_", " ", "é",
                                                     "ß", "日", "🏆", "\"", "\\", ",", "{"};
  std::string out;
  const std::size_t len = 1 + rng() % 5;
  for (std::size_t i = 0; i < len; ++i) out += kAlphabet[rng() % kAlphabet.size()];
  return out;
}

void expect_rows(const std::vector<ColdHit>& got, const std::vector<ModelRow>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].member, want[i].member) << what << " #" << i;
    EXPECT_EQ(got[i].encoded, want[i].encoded) << what << " #" << i;
    EXPECT_EQ(got[i].points, want[i].points) << what << " #" << i;
    EXPECT_EQ(got[i].achieved_at, want[i].achieved_at) << what << " #" << i;
  }
}

// Three spills of random rows into kDaily, later ones replacing some members, many equal
// encoded values; noise in another period of the same board. Returns the model: the rows
// kDaily holds, in listing order.
std::vector<ModelRow> spill_three_times(ColdStore& store, std::mt19937_64& rng) {
  std::map<std::string, ModelRow> by_member;
  for (int spill = 0; spill < 3; ++spill) {
    std::vector<ColdRow> rows;
    for (int i = 0; i < 800; ++i) {
      ModelRow m{static_cast<std::int64_t>(rng() % 60) - 20, random_member(rng),
                 static_cast<std::int64_t>(rng() % 1000), std::nullopt};
      if (rng() % 3 != 0)
        m.achieved_at =
            from_epoch_ms(1'763'000'000'000 + static_cast<std::int64_t>(rng() % 100'000'000));
      rows.push_back({m.member, m.encoded, m.points, m.achieved_at});
      by_member[m.member] = m;  // last wins, as in the store
    }
    store.upsert(kDaily, rows);
  }
  // Noise in another period of the same board.
  store.upsert(kWeekly, {{"a", -100, 1, std::nullopt}, {"b", 0, 1, std::nullopt}});

  std::vector<ModelRow> model;
  model.reserve(by_member.size());
  for (const auto& [member, row] : by_member) model.push_back(row);
  std::sort(model.begin(), model.end());
  return model;
}

// model[from, to), clamped to the model.
std::vector<ModelRow> sub(const std::vector<ModelRow>& model, std::int64_t from, std::int64_t to) {
  const auto n = static_cast<std::int64_t>(model.size());
  from = std::clamp<std::int64_t>(from, 0, n);
  to = std::clamp<std::int64_t>(to, from, n);
  return std::vector<ModelRow>(model.begin() + from, model.begin() + to);
}

// The reads around one probe (an existing row for even probes, an arbitrary point between
// rows for odd ones) against the model.
void expect_probe(ColdReader& r, const std::vector<ModelRow>& model, std::mt19937_64& rng,
                  int probe) {
  const auto n = static_cast<std::int64_t>(model.size());
  // Half the probes are existing rows, half arbitrary points between them.
  ModelRow at;
  if (probe % 2 == 0) {
    at = model[rng() % model.size()];
  } else {
    at = {static_cast<std::int64_t>(rng() % 70) - 25, random_member(rng), 0, std::nullopt};
  }
  const auto pos =
      static_cast<std::int64_t>(std::lower_bound(model.begin(), model.end(), at) - model.begin());
  const auto better = static_cast<std::int64_t>(
      std::lower_bound(model.begin(), model.end(), ModelRow{at.encoded, "", 0, std::nullopt}) -
      model.begin());
  const bool exists = pos < n && model[static_cast<std::size_t>(pos)].encoded == at.encoded &&
                      model[static_cast<std::size_t>(pos)].member == at.member;
  const std::string what = "probe (" + std::to_string(at.encoded) + ", " + at.member + ")";
  EXPECT_EQ(r.count_better(kDaily, at.encoded), better) << what;
  EXPECT_EQ(r.count_before(kDaily, at.encoded, at.member), pos) << what;
  const std::int64_t k = 1 + static_cast<std::int64_t>(rng() % 12);
  expect_rows(r.after(kDaily, at.encoded, at.member, k),
              sub(model, pos + (exists ? 1 : 0), pos + (exists ? 1 : 0) + k), what + " after");
  auto before = sub(model, pos - k, pos);
  std::reverse(before.begin(), before.end());
  expect_rows(r.before(kDaily, at.encoded, at.member, k), before, what + " before");
  const std::int64_t offset = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 5));
  expect_rows(r.slice(kDaily, offset, k), sub(model, offset, offset + k), what + " slice");
}

TEST_F(ColdReaderTest, AgreesWithABruteForceModel) {
  std::mt19937_64 rng(20261122);
  const std::vector<ModelRow> model = spill_three_times(store(), rng);
  const auto n = static_cast<std::int64_t>(model.size());
  ASSERT_GT(n, 1500);

  auto r = store().reader();
  EXPECT_EQ(r.count(kDaily), n);
  expect_rows(r.slice(kDaily, 0, n + 10), model, "full slice");

  for (int probe = 0; probe < 150; ++probe) {
    expect_probe(r, model, rng, probe);
  }

  // rows_for: a random subset plus members that have no row, in listing order.
  std::vector<std::string> ask;
  std::set<std::string> asked;
  for (int i = 0; i < 300; ++i) {
    const std::string m =
        i % 5 == 0 ? "absent:" + std::to_string(i) : model[rng() % model.size()].member;
    ask.push_back(m);
    asked.insert(m);
  }
  std::vector<ModelRow> want;
  for (const auto& row : model) {
    if (asked.count(row.member) != 0) want.push_back(row);
  }
  expect_rows(r.rows_for(kDaily, ask), want, "rows_for");
}

TEST_F(ColdReaderTest, ReaderSeesASnapshot) {
  store().upsert(kDaily, {{"alice", 1, 10, std::nullopt}, {"bob", 2, 20, std::nullopt}});
  auto reader = store().reader();
  // Another connection writes after the reader was created, before it read anything.
  ColdStore writer(test::postgres_url(), schema_.name());
  writer.upsert(kDaily, {{"carol", 0, 30, std::nullopt}, {"alice", 3, 5, std::nullopt}});
  // (By hand, so the period's one page is counted down by hand too.)
  test::exec_sql("WITH d AS (DELETE FROM " + schema_.name() +
                 ".cold_members WHERE member = 'bob' RETURNING 1) UPDATE " + schema_.name() +
                 ".cold_pages SET rows = rows - (SELECT count(*) FROM d)");

  EXPECT_EQ(reader.count(kDaily), 2);
  EXPECT_EQ(reader.count_better(kDaily, 1), 0);
  const auto rows = reader.slice(kDaily, 0, 10);
  EXPECT_EQ(members_of(rows), (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(rows[0].points, 10);
  EXPECT_EQ(members_of(reader.rows_for(kDaily, {"carol", "bob"})),
            (std::vector<std::string>{"bob"}));

  // A reader made afterwards sees the writes.
  {
    ColdReader moved = std::move(reader);
    EXPECT_EQ(moved.count(kDaily), 2);
  }
  auto fresh = store().reader();
  EXPECT_EQ(members_of(fresh.slice(kDaily, 0, 10)), (std::vector<std::string>{"carol", "alice"}));
}

// The counted pages' rows: kDaily's.
const char* const kInPeriod = " board = 'points' AND period = 'daily'";

// The counted pages' test below: kDaily's rows spilled at random, and the model of them.
class PagedModel {
 public:
  PagedModel(ColdStore& store, const std::string& schema) : store_(store), q_(schema + ".") {}

  // `fresh` new members and `replaced` known ones, with encoded values in [low, low + span).
  void spill(int fresh, int replaced, std::int64_t low = 0, std::int64_t span = 4000) {
    std::vector<ColdRow> rows;
    std::vector<bool> absent;
    std::vector<std::string> known;
    for (const auto& [member, row] : by_member_) known.push_back(member);
    for (int i = 0; i < fresh + replaced; ++i) {
      const bool is_new = i < fresh || known.empty();
      const std::string member =
          is_new ? "m" + std::to_string(next_id_++) : known[rng_() % known.size()];
      const ModelRow m{low + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(span)),
                       member, static_cast<std::int64_t>(rng_() % 100), std::nullopt};
      rows.push_back({m.member, m.encoded, m.points, m.achieved_at});
      absent.push_back(is_new);
      by_member_[member] = m;
    }
    store_.upsert(kDaily, rows, absent);
  }

  // The pages exact, and the reads that use them equal to the model at every depth.
  void check(const std::string& when) {
    SCOPED_TRACE(when);
    std::vector<ModelRow> model;
    for (const auto& [member, row] : by_member_) model.push_back(row);
    std::sort(model.begin(), model.end());
    const auto n = static_cast<std::int64_t>(model.size());
    expect_pages_exact();
    auto r = store_.reader();
    ASSERT_EQ(r.count(kDaily), n);
    for (int probe = 0; probe < 60; ++probe) {
      const auto pos = static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(n));
      const auto key = r.key_at(kDaily, pos);
      ASSERT_TRUE(key.has_value()) << pos;
      EXPECT_EQ(key->first, model[static_cast<std::size_t>(pos)].encoded) << pos;
      EXPECT_EQ(key->second, model[static_cast<std::size_t>(pos)].member) << pos;
      EXPECT_EQ(r.count_before(kDaily, key->first, key->second), pos);
      const std::int64_t k = 1 + static_cast<std::int64_t>(rng_() % 30);
      expect_rows(r.slice(kDaily, pos, k),
                  std::vector<ModelRow>(model.begin() + pos, model.begin() + std::min(n, pos + k)),
                  "slice at " + std::to_string(pos));
      const ModelRow at{static_cast<std::int64_t>(rng_() % 4000), random_member(rng_), 0,
                        std::nullopt};
      EXPECT_EQ(r.count_before(kDaily, at.encoded, at.member),
                std::lower_bound(model.begin(), model.end(), at) - model.begin());
    }
    EXPECT_FALSE(r.key_at(kDaily, n).has_value());
    EXPECT_TRUE(r.slice(kDaily, n, 10).empty());
  }

 private:
  // Every page's count is the rows from its key to the next page's; only the first may be
  // empty, and it starts at the smallest key.
  void expect_pages_exact() {
    const std::string& q = q_;
    const std::string in_period = kInPeriod;
    EXPECT_EQ(test::query_int(
                  "SELECT count(*) FROM (SELECT p.rows, (SELECT count(*) FROM " + q +
                  "cold_members c WHERE c.board = p.board AND c.period = p.period AND"
                  " c.period_id = p.period_id AND (c.encoded, c.member) >= (p.encoded, p.member)"
                  " AND (p.next_e IS NULL OR (c.encoded, c.member) < (p.next_e, p.next_m))) AS"
                  " actual FROM (SELECT *, lead(encoded) OVER w AS next_e, lead(member) OVER w"
                  " AS next_m FROM " +
                  q + "cold_pages WHERE" + in_period +
                  " WINDOW w AS (ORDER BY encoded, member)) p) x WHERE rows <> actual"),
              0);
    EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + "cold_pages WHERE" + in_period +
                              " AND rows = 0 AND encoded > -9223372036854775808"),
              0);
    EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + "cold_pages WHERE" + in_period +
                              " AND rows > 2000"),
              0);
  }

  ColdStore& store_;
  std::string q_;
  std::mt19937_64 rng_{20261126};
  std::map<std::string, ModelRow> by_member_;
  std::int64_t next_id_ = 0;
};

// The counted pages (sql/007_cold_pages.sql) stay exact through spills that add rows by
// COPY (a new period: its one page cut by the spill) and by upsert (rows replaced, moving
// between pages; pages cut by the database around older rows), and the reads that use
// them (count, key_at, slice, count_before) equal the model at every depth.
TEST_F(ColdReaderTest, CountedPagesStayExactThroughSpillsAndDeepReadsEqualTheModel) {
  const std::string q = schema_.name() + ".";
  PagedModel paged(store(), schema_.name());
  paged.spill(5500, 0);  // a new period by COPY: its first page cut by the spill
  paged.check("first spill");
  paged.spill(3000, 0);  // by COPY among older rows, evenly: no page grows too big
  paged.check("second spill");
  paged.spill(3000, 0, 1000, 20);  // into one narrow range: the database cuts the pages
  paged.check("third spill");
  paged.spill(3000, 0, 5000, 100);  // after every older row, as a spill's chunks come: cut here
  paged.check("fourth spill");
  paged.spill(0, 2500);  // replacements only: rows move between pages, some pages empty
  paged.check("replacements");
  paged.spill(1200, 1200);
  paged.check("both");
  // Archive-style drop: the pages go with the rows.
  store().drop_period(kDaily);
  EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + "cold_pages WHERE" + kInPeriod), 0);
}

}  // namespace
}  // namespace bk::cold
