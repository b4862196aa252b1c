// The config loader's sections beside the boards: ingest (streams, batch sizes), serve (listen
// addresses, front-end limits, tokens files, the console), history retention, the PostgreSQL
// replica, and Redis cluster and TLS. (The loader itself: config_test.cpp, the same binary.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "config_testing.h"
#include "core/redact.h"

namespace bk {
namespace {

using namespace config_testing;  // NOLINT(google-build-using-namespace)

// --- ingest ---

TEST(ConfigTest, IngestSectionParsesEveryKey) {
  const Config c = parse(
      "ingest:\n"
      "  stream: app:scores\n"
      "  group: leaderboards\n"
      "  reclaim_idle: 2m\n"
      "  trim: false\n"
      "  dead_maxlen: 5000\n"
      "  max_wait: 5m\n" +
      minimal());
  EXPECT_EQ(c.ingest.streams, std::vector<std::string>{"app:scores"});
  EXPECT_EQ(c.ingest.group, "leaderboards");
  EXPECT_EQ(c.ingest.reclaim_idle, minutes{2});
  EXPECT_FALSE(c.ingest.trim);
  EXPECT_EQ(c.ingest.dead_maxlen, 5000);
  EXPECT_EQ(c.ingest.max_wait, minutes{5});
}

// --- serve ---

TEST(ConfigTest, ServeSectionParsesEveryKeyAndDefaults) {
  const Config c =
      parse("serve:\n  listen: 0.0.0.0:9000\n  tokens_file: /etc/bk/tokens\n" + minimal());
  EXPECT_EQ(c.serve.listen, "0.0.0.0:9000");
  EXPECT_EQ(c.serve.tokens_file, "/etc/bk/tokens");
  EXPECT_EQ(c.serve.where, "test.yaml:3:16");
  const Config d = parse(minimal());
  EXPECT_EQ(d.serve.listen, "127.0.0.1:8080");
  EXPECT_EQ(d.serve.tokens_file, "");
  EXPECT_EQ(d.serve.admin_tokens_file, "");
}

TEST(ConfigTest, ServeAdminTokensFileParses) {
  const Config c = parse("serve:\n  admin_tokens_file: /etc/bk/admin\n" + minimal());
  EXPECT_EQ(c.serve.admin_tokens_file, "/etc/bk/admin");
  EXPECT_EQ(c.serve.admin_where, "test.yaml:2:22");
  EXPECT_EQ(c.serve.tokens_file, "") << "distinct from the read tokens";
}

TEST(ConfigTest, ServeRefusesABadListenAddressAndUnknownKeys) {
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  listen: localhost\n" + minimal()), 2, 11,
                         "serve.listen must be HOST:PORT"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  listen: 'h:80x'\n" + minimal()), 2, 11,
                         "serve.listen must be HOST:PORT"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  tokens: [a]\n" + minimal()), 2, 3,
                         "unknown key 'tokens' in the serve section"));
}

TEST(ConfigTest, ServeFrontEndKeysParseAndDefault) {
  const Config c = parse(
      "serve:\n  header_timeout: 5s\n  body_timeout: 2s\n  idle_timeout: 2m\n"
      "  read_timeout: 750ms\n  max_connections: 100\n  cors_origins: [https://app.example, "
      "'http://localhost:3000', "
      "'*']\n  cache_max_age: 30s\n  cold_rank_memory_mb: 0\n" +
      minimal());
  EXPECT_EQ(c.serve.header_timeout, std::chrono::seconds{5});
  EXPECT_EQ(c.serve.body_timeout, std::chrono::seconds{2});
  EXPECT_EQ(c.serve.idle_timeout, minutes{2});
  EXPECT_EQ(c.serve.read_timeout, std::chrono::milliseconds{750});
  EXPECT_EQ(c.serve.max_connections, 100);
  EXPECT_EQ(c.serve.cors_origins,
            (std::vector<std::string>{"https://app.example", "http://localhost:3000", "*"}));
  EXPECT_EQ(c.serve.cache_max_age, std::chrono::seconds{30});
  EXPECT_EQ(c.serve.cold_rank_memory_mb, 0);
  const Config d = parse(minimal());
  EXPECT_EQ(d.serve.header_timeout, std::chrono::seconds{10});
  EXPECT_EQ(d.serve.body_timeout, std::chrono::seconds{10});
  EXPECT_EQ(d.serve.idle_timeout, std::chrono::seconds{60});
  EXPECT_EQ(d.serve.read_timeout, std::chrono::seconds{2});
  EXPECT_EQ(d.serve.max_connections, 4096);
  EXPECT_TRUE(d.serve.cors_origins.empty());
  EXPECT_EQ(d.serve.cache_max_age.count(), 0);
  EXPECT_EQ(d.serve.cold_rank_memory_mb, 64);
}

TEST(ConfigTest, PostgresReadUrlIsAReplicaOrNone) {
  const Config c = parse(
      "postgres:\n  url: postgresql://a@p:5432/b\n  read_url: postgresql://a:secret@r:5432/b\n" +
      minimal());
  EXPECT_EQ(c.postgres.read_url, "postgresql://a:secret@r:5432/b");
  EXPECT_EQ(redact("seen: postgresql://a:secret@r:5432/b").find("secret"), std::string::npos);
  EXPECT_EQ(parse("postgres:\n  read_url: ''\n" + minimal()).postgres.read_url, "");
  EXPECT_EQ(parse(minimal()).postgres.read_url, "");
  EXPECT_TRUE(HasProblem(problems_of("postgres:\n  read_url: mysql://r/b\n" + minimal()), 2, 13,
                         "postgres.read_url is not a PostgreSQL URL"));
  const Config env = parse_config("postgres:\n  read_url: postgresql://a@r/b\n" + minimal(),
                                  "t.yaml", {std::nullopt, std::nullopt, "postgresql://a@env/b"});
  EXPECT_EQ(env.postgres.read_url, "postgresql://a@env/b");
}

TEST(ConfigTest, ServeFrontEndKeysRefuseWhatCannotWork) {
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  header_timeout: 0s\n" + minimal()), 2, 19,
                         "serve.header_timeout must be longer than 0"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  read_timeout: 0ms\n" + minimal()), 2, 17,
                         "serve.read_timeout must be longer than 0"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  idle_timeout: soon\n" + minimal()), 2, 17,
                         "is not a duration"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  max_connections: 0\n" + minimal()), 2, 20,
                         "serve.max_connections must be in [1, 1000000], not 0"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  cold_rank_memory_mb: -1\n" + minimal()), 2, 24,
                         "serve.cold_rank_memory_mb must be in [0, 1048576] (MiB), not -1"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  cache_max_age: 1500ms\n" + minimal()), 2, 18,
                         "serve.cache_max_age must be whole seconds"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  cors_origins: https://a.example\n" + minimal()), 2,
                         17, "serve.cors_origins must be a list of origins"));
  EXPECT_TRUE(
      HasProblem(problems_of("serve:\n  cors_origins: [https://a.example/app]\n" + minimal()), 2,
                 18, "is not an origin"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  cors_origins: [a.example]\n" + minimal()), 2, 18,
                         "is not an origin"));
}

TEST(ConfigTest, ServeConsoleIsOnByDefaultAndTurnsOff) {
  EXPECT_TRUE(parse(minimal()).serve.console);
  EXPECT_FALSE(parse("serve:\n  console: false\n" + minimal()).serve.console);
  EXPECT_TRUE(
      HasProblem(problems_of("serve:\n  console: maybe\n" + minimal()), 2, 12, "serve.console"));
}

TEST(ConfigTest, IngestStreamMayBeAList) {
  const Config c = parse("ingest:\n  stream: [a:events, b:events]\n" + minimal());
  EXPECT_EQ(c.ingest.streams, (std::vector<std::string>{"a:events", "b:events"}));
  const Config block = parse("ingest:\n  stream:\n    - a\n    - b\n    - c\n" + minimal());
  EXPECT_EQ(block.ingest.streams, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ConfigTest, IngestStreamDefaultsToThePrefixesEventsStream) {
  EXPECT_EQ(parse("redis:\n  key_prefix: app\n" + minimal()).ingest.streams,
            std::vector<std::string>{"app:events"});
  EXPECT_EQ(parse("ingest:\n" + minimal()).ingest.streams, std::vector<std::string>{"lb:events"});
  // The prefix is read wherever the sections stand.
  EXPECT_EQ(parse("ingest:\n  trim: true\nredis:\n  key_prefix: app\n" + minimal()).ingest.streams,
            std::vector<std::string>{"app:events"});
}

TEST(ConfigTest, HistoryRetentionPerPeriodNameWithDefaultAndForever) {
  const Config none = parse(minimal());
  EXPECT_FALSE(none.history.retention_for("daily"));  // no section: kept forever
  const Config c =
      parse(minimal() +
            "  - name: cups\n    periods: [weekly, {name: cup, cron: \"0 18 * * 5\"}]\n"
            "    max_points: 10\n    retention: {default: 9d}\n"
            "history:\n  retention:\n    default: 400d\n    daily: 30d\n"
            "    cup: forever\n");
  EXPECT_EQ(c.history.retention_for("daily"), Millis{30LL * 86400 * 1000});
  EXPECT_EQ(c.history.retention_for("weekly"), Millis{400LL * 86400 * 1000});  // the default
  EXPECT_FALSE(c.history.retention_for("cup"));  // forever, not the default
  const Config kept = parse(minimal() + "history:\n  retention:\n    default: forever\n");
  EXPECT_FALSE(kept.history.retention_for("daily"));
  EXPECT_EQ(none.history.large_period_rows, 100000);
  EXPECT_EQ(parse(minimal() + "history:\n  large_period_rows: 5000\n").history.large_period_rows,
            5000);
}

TEST(ConfigTest, BadHistoryRetention) {
  const auto p = problems_of(minimal() +
                             "history:\n"                  // 6
                             "  retention:\n"              // 7
                             "    dialy: 30d\n"            // 8
                             "    daily: 0s\n"             // 9
                             "    default: soon\n"         // 10
                             "  keep: 1\n"                 // 11
                             "  large_period_rows: 0\n");  // 12
  EXPECT_TRUE(HasProblem(p, 8, 5, "history.retention.dialy names a period no board uses (daily)"));
  EXPECT_TRUE(HasProblem(p, 9, 12, "history.retention.daily must be longer than 0 (or forever)"));
  EXPECT_TRUE(HasProblem(p, 10, 14, "history.retention.default"));
  EXPECT_TRUE(HasProblem(p, 11, 3, "unknown key 'keep' in the history section"));
  EXPECT_TRUE(HasProblem(p, 12, 22, "history.large_period_rows must be at least 1, not 0"));
}

TEST(ConfigTest, RedisClusterSeedsAndItsStreams) {
  const Config single = parse(minimal());
  EXPECT_FALSE(single.redis.cluster);
  EXPECT_EQ(single.ingest.streams, std::vector<std::string>{"lb:events"});
  const Config c = parse(
      "redis:\n  url: redis://10.0.0.1:7000\n  cluster: true\n"
      "  nodes: [redis://10.0.0.2:7000, redis://10.0.0.3:7000]\n" +
      minimal());
  EXPECT_TRUE(c.redis.cluster);
  EXPECT_EQ(c.redis.nodes.size(), 2U);
  // The default stream carries a hash tag on a cluster: it and its dead-letter stream share
  // a slot.
  EXPECT_EQ(c.ingest.streams, std::vector<std::string>{"lb:{events}"});
  EXPECT_EQ(
      parse("redis:\n  cluster: true\ningest:\n  stream: [\"app:{a}\", \"{a}:b\"]\n" + minimal())
          .ingest.streams,
      (std::vector<std::string>{"app:{a}", "{a}:b"}));
  // Streams on several slots (nodes): one ingest reads them all.
  EXPECT_EQ(
      parse("redis:\n  cluster: true\ningest:\n  stream: [\"e:{1}\", \"e:{2}\"]\n" + minimal())
          .ingest.streams,
      (std::vector<std::string>{"e:{1}", "e:{2}"}));
}

TEST(ConfigTest, BadRedisCluster) {
  auto p = problems_of(
      "redis:\n"                                   // 1
      "  url: redis://10.0.0.1:7000/2\n"           // 2
      "  cluster: yes\n"                           // 3
      "  nodes: [https://x, 3, redis://ok:1]\n" +  // 4
      minimal());
  EXPECT_TRUE(HasProblem(p, 3, 12, "redis.cluster"));
  EXPECT_TRUE(HasProblem(p, 4, 11, "each seed must be a redis:// or rediss:// URL"));
  EXPECT_TRUE(HasProblem(p, 4, 22, "but it has no scheme"));
  EXPECT_TRUE(HasProblem(p, 4, 10, "set redis.cluster: true too"));
  p = problems_of(
      "redis:\n"                          // 1
      "  url: redis://10.0.0.1:7000/2\n"  // 2
      "  cluster: true\n"                 // 3
      "ingest:\n"                         // 4
      "  stream: app:events\n" +          // 5
      minimal());
  EXPECT_TRUE(HasProblem(p, 2, 8, "a Redis Cluster has only database 0"));
  EXPECT_TRUE(HasProblem(p, 5, 11, "put a hash tag in its name, e.g. 'app:{events}'"));
  p = problems_of("redis:\n  url: unix:///run/redis.sock\n  cluster: true\n" + minimal());
  EXPECT_TRUE(HasProblem(p, 2, 8, "not a unix socket"));
}

TEST(ConfigTest, RedisTls) {
  const Config c = parse(
      "redis:\n"
      "  url: rediss://:Sx5pw@cache.example.com:6380\n"
      "  cluster: true\n"
      "  nodes: [rediss://cache-2.example.com:6380]\n"
      "  tls:\n"
      "    ca_file: /etc/ssl/redis-ca.pem\n"
      "    cert_file: /etc/boardkeeper/client.crt\n"
      "    key_file: /etc/boardkeeper/client.key\n"
      "    server_name: \"*.example.com\"\n" +
      minimal());
  EXPECT_EQ(c.redis.url, "rediss://:Sx5pw@cache.example.com:6380");
  EXPECT_EQ(c.redis.nodes, std::vector<std::string>{"rediss://cache-2.example.com:6380"});
  EXPECT_EQ(c.redis.tls.ca_file, "/etc/ssl/redis-ca.pem");
  EXPECT_EQ(c.redis.tls.cert_file, "/etc/boardkeeper/client.crt");
  EXPECT_EQ(c.redis.tls.key_file, "/etc/boardkeeper/client.key");
  EXPECT_EQ(c.redis.tls.server_name, "*.example.com");
  // The documented example: a tls section beside a redis:// URL is kept for rediss://.
  EXPECT_EQ(parse("redis:\n  tls: {ca_file: /ca.pem}\n" + minimal()).redis.tls.ca_file, "/ca.pem");

  const auto p = problems_of(
      "redis:\n"                            // 1
      "  url: rediss://10.0.0.1:7000\n"     // 2
      "  cluster: true\n"                   // 3
      "  nodes: [redis://10.0.0.2:7000]\n"  // 4
      "  tls:\n"                            // 5
      "    cert_file: /c.pem\n"             // 6
      "    ca_flie: /ca.pem\n"              // 7
      "    server_name: [a]\n" +            // 8
      minimal());
  EXPECT_TRUE(HasProblem(p, 4, 11, "a seed's scheme must be the url's (rediss://)"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "cert_file and key_file go together"));
  EXPECT_EQ(p.size(), 4U);  // rediss://host:port has no database part
  EXPECT_TRUE(HasProblem(p, 7, 5, "ca_flie"));
  EXPECT_TRUE(HasProblem(p, 8, 18, "redis.tls.server_name"));
}

TEST(ConfigTest, BadIngestValues) {
  const auto p = problems_of(
      "ingest:\n"
      "  group: \"\"\n"       // 2
      "  reclaim_idle: 0s\n"  // 3
      "  trim: yes\n"         // 4
      "  dead_maxlen: 0\n"    // 5
      "  bogus: 1\n"          // 6
      "  max_wait: 0s\n" +    // 7
      minimal());
  EXPECT_TRUE(HasProblem(p, 2, 10, "ingest.group must not be empty"));
  EXPECT_TRUE(HasProblem(p, 3, 17, "ingest.reclaim_idle must be longer than 0"));
  EXPECT_TRUE(HasProblem(p, 4, 9, "ingest.trim must be true or false, not the scalar 'yes'"));
  EXPECT_TRUE(HasProblem(p, 5, 16, "ingest.dead_maxlen must be at least 1, not 0"));
  EXPECT_TRUE(HasProblem(p, 6, 3, "unknown key 'bogus' in the ingest section"));
  EXPECT_TRUE(HasProblem(p, 7, 13, "ingest.max_wait must be longer than 0"));
  EXPECT_EQ(p.size(), 6U);
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  dead_maxlen: -5\n" + minimal()), 2, 16,
                         "at least 1, not -5"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  dead_maxlen: lots\n" + minimal()), 2, 16,
                         "ingest.dead_maxlen must be a whole number"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  reclaim_idle: soon\n" + minimal()), 2, 17,
                         "ingest.reclaim_idle 'soon' is not a duration"));
  EXPECT_TRUE(HasProblem(problems_of("ingest: [a]\n" + minimal()), 1, 9,
                         "ingest must be a map of `key: value` lines, not a list"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  dead_mxlen: 5\n" + minimal()), 2, 3,
                         "(did you mean 'dead_maxlen'?)"));
}

TEST(ConfigTest, BadIngestStreams) {
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream: []\n" + minimal()), 2, 11,
                         "ingest.stream must be a stream key or a list of stream keys"));
  EXPECT_TRUE(
      HasProblem(problems_of("ingest:\n  stream: {a: 1}\n" + minimal()), 2, 11, "not a map"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream:\n" + minimal()), 2, 3, "not nothing"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream: \"\"\n" + minimal()), 2, 11,
                         "a stream key must not be empty"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream: [a, [b]]\n" + minimal()), 2, 15,
                         "not a list holding a list"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream: [a, b, a]\n" + minimal()), 2, 18,
                         "stream 'a' is listed twice (first at test.yaml:2:12)"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream: [a:dead, a]\n" + minimal()), 2, 20,
                         "stream 'a:dead' is the dead-letter stream of 'a'"));
  EXPECT_TRUE(HasProblem(problems_of("ingest:\n  stream: [a, a:dead]\n" + minimal()), 2, 15,
                         "stream 'a:dead' is the dead-letter stream of 'a'"));
}

TEST(ConfigTest, StreamListProblems) {
  EXPECT_EQ(stream_list_problem({"a", "b"}), std::nullopt);
  EXPECT_EQ(stream_list_problem({}), "no stream to consume");
  EXPECT_EQ(stream_list_problem({"a", ""}), "a stream key must not be empty");
  EXPECT_EQ(stream_list_problem({"a", "b", "a"}), "stream 'a' is listed twice");
  EXPECT_NE(stream_list_problem({"x:dead", "x"}), std::nullopt);
}

}  // namespace
}  // namespace bk
