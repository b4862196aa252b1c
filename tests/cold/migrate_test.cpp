// Migrations: applied once, in order, idempotently, and safely from concurrent processes.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cold/cold_store.h"
#include "core/error.h"
#include "embedded/cold_migrations.h"
#include "pg_test_util.h"

namespace bk::cold {
namespace {

const int kMigrationCount = static_cast<int>(embedded::kMigrations.size());
const int kLatestVersion = embedded::kMigrations.back().version;

TEST(Migrate, AppliesEveryMigrationOnceAndIsIdempotent) {
  test::TempSchema schema;
  ColdStore store(test::postgres_url(), schema.name());
  EXPECT_EQ(store.schema_version(), 0);  // the schema does not even exist yet

  EXPECT_EQ(store.migrate(), kMigrationCount);
  EXPECT_EQ(store.schema_version(), kLatestVersion);
  EXPECT_EQ(store.migrate(), 0);
  EXPECT_EQ(store.schema_version(), kLatestVersion);

  // Another connection finds nothing to do either.
  ColdStore other(test::postgres_url(), schema.name());
  EXPECT_EQ(other.migrate(), 0);

  const std::string q = "\"" + schema.name() + "\"";
  EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + ".schema_migrations"), kMigrationCount);
  EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + ".schema_migrations WHERE name = '" +
                            std::string(embedded::kMigrations.front().name) + "'"),
            1);
  EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + ".cold_members"), 0);
}

TEST(Migrate, MigrationsAreOrderedByVersion) {
  int previous = 0;
  for (const auto& m : embedded::kMigrations) {
    EXPECT_GT(m.version, previous) << m.name;
    EXPECT_EQ(std::stoi(std::string(m.name.substr(0, 3))), m.version) << m.name;
    EXPECT_NE(m.text.find("{{schema}}"), std::string_view::npos) << m.name;
    previous = m.version;
  }
  EXPECT_EQ(embedded::kMigrations.front().name, "001_cold_tier");
}

TEST(Migrate, ConcurrentMigratesAllSucceedAndApplyEachMigrationOnce) {
  for (int round = 0; round < 3; ++round) {
    test::TempSchema schema;
    constexpr int kThreads = 4;
    std::vector<int> applied(kThreads, -1);
    std::vector<std::string> errors(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        try {
          ColdStore store(test::postgres_url(), schema.name());
          ++ready;
          while (ready.load() < kThreads) std::this_thread::yield();
          applied[static_cast<std::size_t>(i)] = store.migrate();
        } catch (const std::exception& e) {
          ++ready;
          errors[static_cast<std::size_t>(i)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    int total = 0;
    for (int i = 0; i < kThreads; ++i) {
      EXPECT_EQ(errors[static_cast<std::size_t>(i)], "") << "thread " << i;
      EXPECT_GE(applied[static_cast<std::size_t>(i)], 0) << "thread " << i;
      total += applied[static_cast<std::size_t>(i)];
    }
    EXPECT_EQ(total, kMigrationCount);
    const std::string q = "\"" + schema.name() + "\"";
    EXPECT_EQ(test::query_int("SELECT count(*) FROM " + q + ".schema_migrations"), kMigrationCount);
    EXPECT_EQ(test::query_int("SELECT count(DISTINCT version) FROM " + q + ".schema_migrations"),
              kMigrationCount);
  }
}

// The schema is quoted as an identifier everywhere: a reserved word works as well.
TEST(Migrate, ReservedWordSchemaIsQuoted) {
  test::TempSchema schema("user");
  ColdStore store(test::postgres_url(), schema.name());
  EXPECT_EQ(store.migrate(), kMigrationCount);
  const PeriodKey p{"points", "daily", "2026-11-22"};
  const std::int64_t v = store.upsert(p, {{"alice", 5, 10, std::nullopt}});
  const auto hits = store.lookup({{p, "alice"}});
  ASSERT_TRUE(hits[0].has_value());
  EXPECT_EQ(hits[0]->version, v);
  EXPECT_EQ(store.reader().count(p), 1);
  EXPECT_EQ(store.drop_period(p), 1);
}

TEST(Migrate, UnmigratedSchemaIsAnSqlErrorNotUnavailable) {
  test::TempSchema schema;
  ColdStore store(test::postgres_url(), schema.name());
  const PeriodKey p{"points", "daily", "2026-11-22"};
  try {
    store.upsert(p, {{"alice", 5, 10, std::nullopt}});
    FAIL() << "expected an error";
  } catch (const UnavailableError& e) {
    FAIL() << "not an availability problem: " << e.what();
  } catch (const Error& e) {
    // The schema does not exist (3F000); the message names the SQL state, nothing else.
    EXPECT_NE(std::string(e.what()).find("(SQLSTATE 3F000)"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("ERROR:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bk::cold
