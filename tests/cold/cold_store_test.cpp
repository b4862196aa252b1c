// The store's writes and lookups: versions, conditional deletes, member ids that must
// round-trip byte for byte, error mapping, and the throughput of a spill.
#include "cold/cold_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <thread>

#include "core/error.h"
#include "pg_test_util.h"

namespace bk::cold {
namespace {

class ColdStoreTest : public ::testing::Test {
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
const PeriodKey kOtherBoard{"game:chess/eu.1", "daily", "2026-11-22"};

TEST_F(ColdStoreTest, UpsertThenLookupReturnsRowsWithTheirVersion) {
  const Instant at = from_epoch_ms(1763791380250);  // 2025-11-22T06:03:00.250Z
  const Instant old = from_epoch_ms(-86'400'123);   // before 1970, still exact
  const std::int64_t v1 = store().upsert(
      kDaily, {{"alice", -5, 500, at}, {"bob", 7, 70, std::nullopt}, {"carol", 7, 70, old}});
  const std::int64_t v2 = store().upsert(kWeekly, {{"alice", 1, 900, at}});
  EXPECT_GT(v2, v1);

  const auto hits = store().lookup({{kDaily, "alice"},
                                    {kDaily, "nobody"},
                                    {kWeekly, "alice"},
                                    {kOtherBoard, "alice"},
                                    {kDaily, "carol"},
                                    {kDaily, "bob"},
                                    {kDaily, "alice"}});
  ASSERT_EQ(hits.size(), 7U);
  ASSERT_TRUE(hits[0].has_value());
  EXPECT_EQ(hits[0]->member, "alice");
  EXPECT_EQ(hits[0]->encoded, -5);
  EXPECT_EQ(hits[0]->points, 500);
  EXPECT_EQ(hits[0]->achieved_at, at);
  EXPECT_EQ(hits[0]->version, v1);
  EXPECT_FALSE(hits[1].has_value());
  ASSERT_TRUE(hits[2].has_value());
  EXPECT_EQ(hits[2]->points, 900);
  EXPECT_EQ(hits[2]->version, v2);
  EXPECT_FALSE(hits[3].has_value());
  ASSERT_TRUE(hits[4].has_value());
  EXPECT_EQ(hits[4]->achieved_at, old);
  ASSERT_TRUE(hits[5].has_value());
  EXPECT_FALSE(hits[5]->achieved_at.has_value());
  ASSERT_TRUE(hits[6].has_value());  // the same key twice: both answered
  EXPECT_EQ(hits[6]->member, "alice");

  EXPECT_TRUE(store().lookup({}).empty());
}

TEST_F(ColdStoreTest, ReUpsertReplacesTheRowUnderANewVersion) {
  const std::int64_t v1 =
      store().upsert(kDaily, {{"alice", 10, 100, std::nullopt}, {"bob", 20, 200, std::nullopt}});
  const std::int64_t v2 = store().upsert(kDaily, {{"alice", 5, 150, from_epoch_ms(42)}});
  EXPECT_GT(v2, v1);
  const auto hits = store().lookup({{kDaily, "alice"}, {kDaily, "bob"}});
  ASSERT_TRUE(hits[0] && hits[1]);
  EXPECT_EQ(hits[0]->version, v2);
  EXPECT_EQ(hits[0]->encoded, 5);
  EXPECT_EQ(hits[0]->points, 150);
  EXPECT_EQ(hits[0]->achieved_at, from_epoch_ms(42));
  EXPECT_EQ(hits[1]->version, v1);  // untouched
  EXPECT_EQ(store().reader().count(kDaily), 2);
}

// Rows promised absent go in by COPY; when the promise is wrong (the member has a row),
// the spill is redone as an upsert: the row is replaced, nothing fails, nothing doubles.
TEST_F(ColdStoreTest, RowsPromisedAbsentAreCopiedAndABrokenPromiseStillUpserts) {
  const std::int64_t v1 = store().upsert(kDaily, {{"alice", 10, 100, std::nullopt}});
  const std::int64_t v2 = store().upsert(
      kDaily, {{"bob", 20, 200, from_epoch_ms(7)}, {"carol", 30, 300, std::nullopt}}, {true, true});
  EXPECT_GT(v2, v1);
  const std::int64_t v3 = store().upsert(
      kDaily, {{"alice", 5, 150, from_epoch_ms(42)}, {"dave", 40, 400, std::nullopt}},
      {true, true});  // alice is not absent
  const auto hits =
      store().lookup({{kDaily, "alice"}, {kDaily, "bob"}, {kDaily, "carol"}, {kDaily, "dave"}});
  ASSERT_TRUE(hits[0] && hits[1] && hits[2] && hits[3]);
  EXPECT_EQ(hits[0]->points, 150);
  EXPECT_EQ(hits[0]->version, v3);
  EXPECT_EQ(hits[0]->achieved_at, from_epoch_ms(42));
  EXPECT_EQ(hits[1]->points, 200);
  EXPECT_EQ(hits[1]->version, v2);
  EXPECT_EQ(hits[1]->achieved_at, from_epoch_ms(7));
  EXPECT_FALSE(hits[2]->achieved_at);
  EXPECT_EQ(hits[3]->version, v3);
  EXPECT_EQ(store().reader().count(kDaily), 4);
}

TEST_F(ColdStoreTest, PeriodsWithRowsListsEachPeriodOnceInOrder) {
  EXPECT_TRUE(store().periods_with_rows().empty());
  const PeriodKey other{"arena", "daily", "2026-11-21"};
  store().upsert(kWeekly, {{"a", 1, 1, std::nullopt}});
  store().upsert(kDaily, {{"a", 1, 1, std::nullopt}, {"b", 2, 2, std::nullopt}});
  store().upsert(other, {{"z", 1, 1, std::nullopt}});
  const auto key_of = [](const PeriodKey& k) {
    return k.board + "|" + k.period + "|" + k.period_id;
  };
  std::vector<std::string> all;
  for (const auto& k : store().periods_with_rows()) all.push_back(key_of(k));
  EXPECT_EQ(all, (std::vector<std::string>{key_of(other), key_of(kDaily), key_of(kWeekly)}));
  std::vector<std::string> points;
  for (const auto& k : store().periods_with_rows(std::string("points")))
    points.push_back(key_of(k));
  EXPECT_EQ(points, (std::vector<std::string>{key_of(kDaily), key_of(kWeekly)}));
  store().drop_period(kDaily);
  EXPECT_EQ(store().periods_with_rows(std::string("points")).size(), 1U);
  EXPECT_TRUE(store().periods_with_rows(std::string("nobody")).empty());
}

TEST_F(ColdStoreTest, DropPeriodDeletesOnlyThatPeriod) {
  store().upsert(kDaily, {{"a", 1, 1, std::nullopt}, {"b", 2, 2, std::nullopt}});
  store().upsert(kWeekly, {{"a", 1, 1, std::nullopt}});
  store().upsert(kOtherBoard, {{"a", 1, 1, std::nullopt}});
  EXPECT_EQ(store().drop_period(kDaily), 2);
  EXPECT_EQ(store().drop_period(kDaily), 0);
  auto r = store().reader();
  EXPECT_EQ(r.count(kDaily), 0);
  EXPECT_EQ(r.count(kWeekly), 1);
  EXPECT_EQ(r.count(kOtherBoard), 1);
}

TEST_F(ColdStoreTest, UpsertOfNoRowsAndOfADuplicateMember) {
  const std::int64_t v0 = store().upsert(kDaily, {});
  EXPECT_GT(v0, 0);
  EXPECT_EQ(store().reader().count(kDaily), 0);
  // One member given twice in one spill: the last row wins.
  store().upsert(
      kDaily,
      {{"alice", 1, 1, std::nullopt}, {"bob", 2, 2, std::nullopt}, {"alice", 3, 3, std::nullopt}});
  const auto hit = store().lookup({{kDaily, "alice"}})[0];
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->points, 3);
  EXPECT_EQ(store().reader().count(kDaily), 2);
}

std::vector<std::string> nasty_members() {
  std::vector<std::string> out = {"NULL",
                                  "null",
                                  "\"NULL\"",
                                  "",
                                  "a,b",
                                  "{a,b}",
                                  "{",
                                  "}",
                                  "{}",
                                  "\"",
                                  "\"\"",
                                  "\\",
                                  "\\\\",
                                  "a\\\"b",
                                  "ends with backslash\\",
                                  "\\N",
                                  "'single'",
                                  "tab\there",
                                  "new\nline",
                                  "cr\rlf\r\n",
                                  " leading and trailing ",
                                  "  ",
                                  "é",
                                  "ÿ",
                                  "日本語",
                                  "🏆🥇",
                                  "\x7f",
                                  "e\xcc\x81",  // e + combining acute: not normalised
                                  "$1",
                                  "%s",
                                  "';DROP TABLE x;--",
                                  "a\x01\x02\x1f",
                                  "(1,2)",
                                  "ROW(1)",
                                  "[1:2]={1,2}"};
  out.erase(std::find(out.begin(), out.end(), ""));  // members are at least one byte
  out.push_back(std::string(512, 'x'));
  std::string emoji512;
  while (emoji512.size() < 512) emoji512 += "\xf0\x9f\x8f\x86";  // U+1F3C6, 4 bytes
  out.push_back(emoji512);
  std::string mixed;
  const std::string pieces[] = {"\"", "\\", ",", "{", "}", "\t", "\n", "é", " "};
  for (std::size_t i = 0; mixed.size() + 2 <= 510; ++i) mixed += pieces[i % 9];
  out.push_back(mixed);
  return out;
}

TEST_F(ColdStoreTest, MemberIdsRoundTripByteForByte) {
  const std::vector<std::string> members = nasty_members();
  std::vector<ColdRow> rows;
  std::vector<MemberKey> keys;
  for (std::size_t i = 0; i < members.size(); ++i) {
    ASSERT_LE(members[i].size(), 512U);
    rows.push_back({members[i], static_cast<std::int64_t>(i), static_cast<std::int64_t>(i * 10),
                    from_epoch_ms(static_cast<std::int64_t>(i))});
    keys.push_back({kDaily, members[i]});
  }
  const std::int64_t v = store().upsert(kDaily, rows);
  const auto hits = store().lookup(keys);
  ASSERT_EQ(hits.size(), members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    ASSERT_TRUE(hits[i].has_value()) << "member #" << i;
    EXPECT_EQ(hits[i]->member, members[i]) << "member #" << i;
    EXPECT_EQ(hits[i]->encoded, static_cast<std::int64_t>(i));
    EXPECT_EQ(hits[i]->version, v);
  }
  {
    auto reader = store().reader();
    EXPECT_EQ(reader.count(kDaily), static_cast<std::int64_t>(members.size()));
    const auto listed = reader.slice(kDaily, 0, 1000);
    ASSERT_EQ(listed.size(), members.size());
    for (std::size_t i = 0; i < members.size(); ++i) EXPECT_EQ(listed[i].member, members[i]);
    const auto found = reader.rows_for(kDaily, members);
    ASSERT_EQ(found.size(), members.size());
    for (std::size_t i = 0; i < members.size(); ++i) EXPECT_EQ(found[i].member, members[i]);
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto e = static_cast<std::int64_t>(i);
      EXPECT_EQ(reader.count_before(kDaily, e, members[i]), e) << "member #" << i;
      const auto next = reader.after(kDaily, e, members[i], 1);
      if (i + 1 < members.size()) {
        ASSERT_EQ(next.size(), 1U);
        EXPECT_EQ(next[0].member, members[i + 1]);
      }
    }
  }
  EXPECT_EQ(store().drop_period(kDaily), static_cast<std::int64_t>(members.size()));
  EXPECT_EQ(store().reader().count(kDaily), 0);
}

TEST_F(ColdStoreTest, PeriodKeysWithOddCharactersAreKeptApart) {
  const PeriodKey a{"game:chess/eu.1", "cup", "2026-11-20T18:00"};
  const PeriodKey b{"game:chess/eu.1", "cup", "2026-11-27T18:00"};
  const PeriodKey c{"game:chess/eu", "cup", "2026-11-20T18:00"};
  store().upsert(a, {{"m", 1, 1, std::nullopt}});
  store().upsert(b, {{"m", 2, 2, std::nullopt}});
  const auto hits = store().lookup({{a, "m"}, {b, "m"}, {c, "m"}});
  ASSERT_TRUE(hits[0] && hits[1]);
  EXPECT_EQ(hits[0]->points, 1);
  EXPECT_EQ(hits[1]->points, 2);
  EXPECT_FALSE(hits[2]);
}

TEST_F(ColdStoreTest, NulInAMemberIsRefusedNotTruncated) {
  const std::string nul("a\0b", 3);
  EXPECT_THROW(store().upsert(kDaily, {{nul, 1, 1, std::nullopt}}), RefusedError);
  EXPECT_THROW(store().lookup({{kDaily, nul}}), RefusedError);
  EXPECT_EQ(store().reader().count(kDaily), 0);
}

TEST_F(ColdStoreTest, InvalidUtf8IsAnErrorAndNothingIsWritten) {
  EXPECT_THROW(
      store().upsert(kDaily, {{"ok", 1, 1, std::nullopt}, {"\xff\xfe", 2, 2, std::nullopt}}),
      Error);
  EXPECT_EQ(store().reader().count(kDaily), 0);
  // The connection is still usable afterwards.
  store().upsert(kDaily, {{"ok", 1, 1, std::nullopt}});
  EXPECT_EQ(store().reader().count(kDaily), 1);
}

// Two spills of the same period with overlapping members, given in different orders, run at
// once: row locks are taken in one order, so neither deadlocks.
TEST_F(ColdStoreTest, ConcurrentOverlappingUpsertsDoNotDeadlock) {
  constexpr int kRounds = 15;
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      try {
        ColdStore s(test::postgres_url(), schema_.name());
        std::mt19937 rng(static_cast<unsigned>(t));
        for (int round = 0; round < kRounds; ++round) {
          std::vector<ColdRow> rows;
          rows.reserve(800);
          for (int i = 0; i < 800; ++i) {
            rows.push_back({"m" + std::to_string(i), i, round, std::nullopt});
          }
          std::shuffle(rows.begin(), rows.end(), rng);
          s.upsert(kDaily, rows);
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(store().reader().count(kDaily), 800);
}

TEST_F(ColdStoreTest, UpsertOf50000RowsInChunksOf5000) {
  constexpr int kRows = 50'000;
  constexpr int kChunk = 5'000;
  std::mt19937_64 rng(7);
  const auto start = std::chrono::steady_clock::now();
  for (int begin = 0; begin < kRows; begin += kChunk) {
    std::vector<ColdRow> rows;
    rows.reserve(kChunk);
    for (int i = begin; i < begin + kChunk; ++i) {
      rows.push_back({"member:" + std::to_string(i) + ":\"x\\y\"",
                      static_cast<std::int64_t>(rng() % 1'000'000),
                      static_cast<std::int64_t>(rng() % 1000),
                      from_epoch_ms(1'700'000'000'000 + i)});
    }
    store().upsert(kDaily, rows);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ perf     ] upserted " << kRows << " rows in " << seconds << " s ("
            << static_cast<long long>(kRows / seconds) << " rows/s)\n";
  EXPECT_EQ(store().reader().count(kDaily), kRows);

  // A second spill of the same members replaces them (the ON CONFLICT path).
  const auto again = std::chrono::steady_clock::now();
  std::vector<ColdRow> rows;
  rows.reserve(kChunk);
  for (int i = 0; i < kChunk; ++i) {
    rows.push_back({"member:" + std::to_string(i) + ":\"x\\y\"", i, i, std::nullopt});
  }
  const std::int64_t v = store().upsert(kDaily, rows);
  std::cout << "[ perf     ] re-upserted " << kChunk << " rows in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count()
            << " s\n";
  EXPECT_EQ(store().lookup({{kDaily, "member:42:\"x\\y\""}})[0]->version, v);
  EXPECT_EQ(store().reader().count(kDaily), kRows);
}

// ---- availability and error mapping -----------------------------------------------------

std::string message_of(const std::string& url) {
  try {
    ColdStore s(url, "boardkeeper");
  } catch (const UnavailableError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an UnavailableError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "connected to " << url;
  return "";
}

TEST(ColdStoreConnect, UnreachableServerIsUnavailable) {
  EXPECT_THROW(ColdStore("postgresql://boardkeeper@127.0.0.1:1/boards", "boardkeeper"),
               UnavailableError);
  const std::string m = message_of("postgresql://boardkeeper@127.0.0.1:1/boards");
  EXPECT_NE(m.find("127.0.0.1:1/boards"), std::string::npos) << m;
}

TEST(ColdStoreConnect, MessagesNeverShowThePassword) {
  for (const char* url : {"postgresql://boardkeeper:s3cr3t-pw@127.0.0.1:1/boards",
                          "postgresql://boardkeeper:s3cr3t%2Dpw@127.0.0.1:1/boards?sslmode=disable",
                          "postgres://boardkeeper@127.0.0.1:1/boards?password=s3cr3t-pw",
                          "host=127.0.0.1 port=1 dbname=boards user=boardkeeper password=s3cr3t-pw",
                          "host=127.0.0.1 port=1 dbname=boards password='s3cr3t-pw'"}) {
    const std::string m = message_of(url);
    EXPECT_EQ(m.find("s3cr3t"), std::string::npos) << m;
    EXPECT_NE(m.find("127.0.0.1:1/boards"), std::string::npos) << m;
  }
}

TEST(ColdStoreConnect, UrlsWithQueryParametersStillGetAConnectTimeout) {
  const std::string url = test::postgres_url();
  const std::string sep = url.find('?') == std::string::npos ? "?" : "&";
  for (const std::string& u : {url, url + sep + "application_name=bk_cold_test",
                               url + sep + "connect_timeout=3", url + sep}) {
    test::TempSchema schema;
    ColdStore s(u, schema.name());
    EXPECT_GE(s.migrate(), 1) << u;
    EXPECT_GE(s.schema_version(), 1) << u;
  }
}

// A transaction that loses its server fails with UnavailableError, never a generic error.
TEST_F(ColdStoreTest, ServerTerminatingTheConnectionIsUnavailable) {
  store().upsert(kDaily, {{"alice", 1, 1, std::nullopt}});
  const std::string app = "bk_" + schema_.name();
  ColdStore victim(test::postgres_url() +
                       (test::postgres_url().find('?') == std::string::npos ? "?" : "&") +
                       "application_name=" + app,
                   schema_.name());
  auto reader = victim.reader();
  EXPECT_EQ(reader.count(kDaily), 1);
  EXPECT_EQ(test::query_int("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE application_name = '" +
                            app + "'"),
            1);
  EXPECT_THROW(reader.count(kDaily), UnavailableError);
  // The store connects afresh on its next call.
  EXPECT_TRUE(victim.lookup({{kDaily, "alice"}})[0].has_value());
  EXPECT_EQ(victim.reader().count(kDaily), 1);
}

// A connection the server closed while idle: the next call fails as unavailable (nothing
// is retried behind the caller's back), and the one after that reconnects.
TEST_F(ColdStoreTest, IdleConnectionClosedByTheServerIsReplaced) {
  const std::string app = "bk_idle_" + schema_.name();
  ColdStore victim(test::postgres_url() +
                       (test::postgres_url().find('?') == std::string::npos ? "?" : "&") +
                       "application_name=" + app,
                   schema_.name());
  victim.upsert(kDaily, {{"alice", 1, 1, std::nullopt}});
  const std::string sessions =
      "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app + "'";
  EXPECT_EQ(test::query_int("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE application_name = '" +
                            app + "'"),
            1);
  for (int i = 0; i < 100 && test::query_int(sessions) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  try {
    victim.upsert(kDaily, {{"bob", 2, 2, std::nullopt}});
    ADD_FAILURE() << "a broken connection went unnoticed";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("postgresql at "), std::string::npos) << e.what();
  }
  victim.upsert(kDaily, {{"bob", 2, 2, std::nullopt}});
  EXPECT_EQ(victim.reader().count(kDaily), 2);
  EXPECT_EQ(test::query_int(sessions), 1);
}

// The store's connection carries the reader's transaction: other calls on the same store
// fail clearly until the reader is gone; a reader may outlive its store.
TEST_F(ColdStoreTest, ReaderOccupiesItsStoresConnection) {
  store().upsert(kDaily, {{"alice", 1, 1, std::nullopt}});
  {
    auto reader = store().reader();
    EXPECT_THROW(store().upsert(kDaily, {{"bob", 2, 2, std::nullopt}}), Error);
    EXPECT_EQ(reader.count(kDaily), 1);
  }
  store().upsert(kDaily, {{"bob", 2, 2, std::nullopt}});
  auto reader = store().reader();
  store_.reset();
  EXPECT_EQ(reader.count(kDaily), 2);
}

}  // namespace
}  // namespace bk::cold
