// One deployment per data set: two Redis data sets (db 2 and db 3 of the test Redis, one key
// prefix, board `arena` in both) pointed at one PostgreSQL schema never read, archive or
// delete each other's rows. The second is refused (exit 2) before it writes anything; a Redis
// that lost its data takes its own schema back; a hand-over to another Redis is on purpose.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <thread>

#include "cold/cold_store.h"
#include "harness.h"
#include "hot/keys.h"
#include "redis/url.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

const char* kBoards = R"(  - name: arena
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    archive: {grace: 1m}
    retention: {default: 3650d}
)";

// The test Redis's URL with another database number.
std::string redis_db(int db) {
  std::string url = test::redis_url();
  const auto slash = url.find('/', url.find("://") + 3);
  return url.substr(0, slash) + "/" + std::to_string(db);
}

struct Deployment {
  int db;
  std::string schema;
  std::string path;  // its config file
};

class DeploymentTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();

  void TearDown() override {
    for (const int db : {2, 3}) {
      redis::Connection c(redis::parse_url(redis_db(db)));
      for (const auto& k : test::keys_with_prefix(c, prefix)) c.command({"DEL", k});
    }
  }

  std::string config_text(int db, const std::string& schema) const {
    return "redis:\n  url: " + redis_db(db) + "\n  key_prefix: " + prefix +
           "\npostgres:\n  url: " + test::postgres_url() + "\n  schema: " + schema + "\nboards:\n" +
           kBoards;
  }

  Deployment deployment(int db, const std::string& schema) const {
    Deployment d{db, schema,
                 "/tmp/bk-test-" + prefix + "-db" + std::to_string(db) + "-" + schema + ".yaml"};
    std::ofstream(d.path) << config_text(db, schema);
    return d;
  }

  test::RunResult bk(const Deployment& d, const std::string& now, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", d.path, "--now=" + now});
    return test::run_cli(args);
  }

  // Members m0..m<n-1> of arena's day 2027-01-04 in the deployment's Redis, with points
  // base + i (written with the library, which does not check deployments).
  void fill(const Deployment& d, int n, std::int64_t base) {
    const Config config = parse_config(config_text(d.db, d.schema), "test.yaml", {});
    redis::Connection c(redis::parse_url(redis_db(d.db)));
    cold::ColdStore cold(test::postgres_url(), d.schema);
    service::Leaderboards lb(config, c, Clock(at("2027-01-04T11:00:00Z")), &cold);
    std::vector<service::Update> updates;
    updates.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      updates.push_back(
          {"arena", "m" + std::to_string(i), base + i, at("2027-01-04T10:00:00Z"), ""});
    }
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
  }

  // Every row the schema holds, as text.
  static std::string rows(const std::string& schema) {
    std::string out;
    for (const char* table : {"cold_members", "periods", "history_rows", "deployment"}) {
      out += std::string(table) + ": " +
             test::psql("SELECT coalesce(string_agg(x::text, ' | ' ORDER BY x::text), '') FROM " +
                        schema + "." + table + " x");
    }
    return out;
  }

  // Every key of the prefix in that Redis database, with its serialized value.
  std::map<std::string, std::string> keys(int db) const {
    redis::Connection c(redis::parse_url(redis_db(db)));
    std::map<std::string, std::string> out;
    for (const auto& k : test::keys_with_prefix(c, prefix)) out[k] = c.command({"DUMP", k}).str;
    return out;
  }

  std::optional<std::string> marker(int db) const {
    redis::Connection c(redis::parse_url(redis_db(db)));
    const redis::Reply r = c.command({"GET", hot::deployment_key(prefix)});
    if (r.is_nil()) return std::nullopt;
    return r.str;
  }

  std::string owner_id(const std::string& schema) const {
    std::string id = test::psql("SELECT id FROM " + schema + ".deployment");
    while (!id.empty() && id.back() == '\n') id.pop_back();
    return id;
  }
};

TEST_F(DeploymentTest, ASecondDataSetOnTheSameSchemaIsRefusedBeforeItWritesAnything) {
  const Deployment a = deployment(2, prefix);
  const Deployment b_alone = deployment(3, prefix + "b");  // b in a schema of its own first
  const Deployment b = deployment(3, prefix);              // then pointed at a's by mistake
  ASSERT_EQ(bk(a, "2027-01-04T12:00:00Z", {"migrate"}).exit_code, 0);
  ASSERT_EQ(bk(b_alone, "2027-01-04T12:00:00Z", {"migrate"}).exit_code, 0);

  // Both spill 25 of 30 members of arena 2027-01-04: the same member ids, other points.
  fill(a, 30, 1);
  fill(b_alone, 30, 1000);
  auto r = bk(a, "2027-01-04T12:00:00Z", {"tick"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = bk(b_alone, "2027-01-04T12:00:00Z", {"tick"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string a_rows = rows(a.schema);
  const std::string b_alone_rows = rows(b_alone.schema);
  const auto b_keys = keys(3);

  // b on a's schema: its tick (the period is due), an update of a spilled member and a read
  // of the spilled period are all refused with exit 2, saying whose schema it is.
  r = bk(b, "2027-01-05T12:00:00Z", {"tick"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("schema " + prefix + " belongs to another deployment"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(redis_db(2).substr(8) + " with key prefix '" + prefix + "'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(redis_db(3).substr(8) + " with key prefix '" + prefix + "'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("postgres.schema"), std::string::npos) << r.err;
  r = bk(b, "2027-01-04T13:00:00Z", {"add", "arena", "m3", "5"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  r = bk(b, "2027-01-04T13:00:00Z", {"top", "arena", "daily", "-n", "30"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;

  // Nothing crossed: a's schema, b's own schema and b's Redis are as they were.
  EXPECT_EQ(rows(a.schema), a_rows);
  EXPECT_EQ(rows(b_alone.schema), b_alone_rows);
  EXPECT_EQ(keys(3), b_keys);

  // a's archive is complete and exact: its 30 members with its own points.
  r = bk(a, "2027-01-05T12:00:00Z", {"tick"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string want;
  for (int i = 29; i >= 0; --i) want += "m" + std::to_string(i) + ":" + std::to_string(1 + i) + ",";
  want.back() = '\n';
  EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || points, ',' ORDER BY position) FROM " +
                       a.schema + ".history_rows"),
            want);
  EXPECT_EQ(test::psql("SELECT count(*) FROM " + a.schema + ".cold_members"), "0\n");
  // b's own cold rows are untouched.
  EXPECT_EQ(
      test::psql("SELECT count(*) || ' ' || min(points) FROM " + b_alone.schema + ".cold_members"),
      "25 1000\n");
}

TEST_F(DeploymentTest, TwoDataSetsRacingForAFreshSchemaOneWinsEveryTime) {
  const Deployment a = deployment(2, prefix);
  const Deployment b = deployment(3, prefix);
  ASSERT_EQ(bk(a, "2027-01-04T12:00:00Z", {"migrate"}).exit_code, 0);
  std::vector<int> pids;
  pids.reserve(6);
  for (int i = 0; i < 6; ++i) {
    pids.push_back(test::spawn_cli(
        {"--config", (i % 2 == 0 ? a : b).path, "--now=2027-01-04T12:00:00Z", "tick"},
        "/tmp/bk-race-" + prefix + "-" + std::to_string(i) + ".log"));
  }
  std::vector<int> codes;
  codes.reserve(pids.size());
  for (const int pid : pids) codes.push_back(test::wait_cli(pid));
  const std::string owner = owner_id(prefix);
  const int winner = owner == marker(2) ? 2 : owner == marker(3) ? 3 : -1;
  ASSERT_NE(winner, -1) << "the schema's owner is neither data set: " << owner;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const int db = i % 2 == 0 ? 2 : 3;
    EXPECT_EQ(codes[i], db == winner ? 0 : 2) << "tick " << i << " of db " << db;
  }
  EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".deployment"), "1\n");
}

TEST_F(DeploymentTest, ARedisThatLostItsDataTakesItsOwnSchemaBack) {
  const Deployment a = deployment(2, prefix);
  ASSERT_EQ(bk(a, "2027-01-04T12:00:00Z", {"migrate"}).exit_code, 0);
  fill(a, 30, 1);
  ASSERT_EQ(bk(a, "2027-01-04T12:00:00Z", {"tick"}).exit_code, 0);
  const auto before = marker(2);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(owner_id(prefix), *before);

  // FLUSHALL-like: every key of the data set is gone, the marker with them.
  {
    redis::Connection c(redis::parse_url(redis_db(2)));
    for (const auto& k : test::keys_with_prefix(c, prefix)) c.command({"DEL", k}).checked();
  }
  auto r = bk(a, "2027-01-04T12:05:00Z", {"tick"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("had no deployment marker"), std::string::npos) << r.err;
  const auto after = marker(2);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(owner_id(prefix), *after);
  EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".cold_members"), "25\n");
  // Taken back once: the next tick says nothing more about it.
  r = bk(a, "2027-01-04T12:06:00Z", {"tick"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("deployment"), std::string::npos) << r.err;
}

TEST_F(DeploymentTest, AnotherRedisGetsTheSchemaOnlyByAHandOverThatShutsTheOldOneOut) {
  const Deployment a = deployment(2, prefix);
  const Deployment b = deployment(3, prefix);
  ASSERT_EQ(bk(a, "2027-01-04T12:00:00Z", {"migrate"}).exit_code, 0);
  fill(a, 30, 1);
  ASSERT_EQ(bk(a, "2027-01-04T12:00:00Z", {"tick"}).exit_code, 0);
  const std::string a_rows = rows(prefix);

  // db 3 has no marker (a fresh Redis): refused, with the statement that hands over.
  auto r = bk(b, "2027-01-04T12:00:00Z", {"tick"});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("has no deployment marker"), std::string::npos) << r.err;
  EXPECT_EQ(rows(prefix), a_rows);
  EXPECT_FALSE(marker(3).has_value());
  const auto from = r.err.find("UPDATE ");
  ASSERT_NE(from, std::string::npos) << r.err;
  const std::string handover = r.err.substr(from, r.err.find(';', from) + 1 - from);

  // Run on purpose, it gives db 3 the schema, and db 2 (still around) is out from now on.
  test::psql(handover);
  r = bk(b, "2027-01-04T12:00:00Z", {"tick"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(owner_id(prefix), marker(3).value_or("none"));
  r = bk(a, "2027-01-04T12:00:00Z", {"tick"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("belongs to another deployment"), std::string::npos) << r.err;
}

TEST_F(DeploymentTest, ASchemaNotMigratedSaysSo) {
  const Deployment a = deployment(2, prefix);
  const auto r = bk(a, "2027-01-04T12:00:00Z", {"tick"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("boardkeeper migrate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace bk
