// Redis URL parsing: hosts (IPv4, names, IPv6 in brackets), percent-escapes, passwords holding
// URL delimiters, and errors that name the part at fault without echoing the URL.
#include "redis/url.h"
#include "redis/connection.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace bk::redis {
namespace {

TEST(RedisUrl, HostPortDatabaseAndCredentials) {
  Options o = parse_url("redis://127.0.0.1:6390/3");
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 6390);
  EXPECT_EQ(o.db, 3);
  EXPECT_TRUE(o.password.empty());
  o = parse_url("redis://app:p%40ss@cache.internal");
  EXPECT_EQ(o.host, "cache.internal");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.username, "app");
  EXPECT_EQ(o.password, "p@ss");
  o = parse_url("redis://:secret@h:1/");
  EXPECT_EQ(o.username, "");
  EXPECT_EQ(o.password, "secret");
  EXPECT_EQ(o.db, 0);
  o = parse_url("unix:///run/redis.sock?db=2");
  EXPECT_EQ(o.unix_path, "/run/redis.sock");
  EXPECT_EQ(o.db, 2);
}

TEST(RedisUrl, RedissIsTls) {
  Options o = parse_url("rediss://app:pw@cache.example.com:6380/1");
  EXPECT_TRUE(o.tls.enabled);
  EXPECT_EQ(o.host, "cache.example.com");
  EXPECT_EQ(o.port, 6380);
  EXPECT_EQ(o.username, "app");
  EXPECT_EQ(o.db, 1);
  EXPECT_EQ(describe(o), "cache.example.com:6380 db 1 (TLS)");
  EXPECT_FALSE(parse_url("redis://h").tls.enabled);
  EXPECT_EQ(parse_url("rediss://h").port, 6379);
}

TEST(RedisUrl, Ipv6HostsInBrackets) {
  Options o = parse_url("redis://[::1]:6379/0");
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.db, 0);
  o = parse_url("redis://:pw@[fe80::1%25eth0]/4");
  EXPECT_EQ(o.host, "fe80::1%eth0");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.db, 4);
  EXPECT_EQ(describe(parse_url("redis://[::1]:7000/2")), "[::1]:7000 db 2");
  EXPECT_EQ(describe(parse_url("redis://u:pw@h:7000")), "h:7000 db 0");
  EXPECT_EQ(describe(parse_url("unix:///s.sock?db=1")), "unix socket /s.sock db 1");
}

TEST(RedisUrl, PasswordsMayHoldUrlDelimitersAsTheyAre) {
  // The user info ends at the LAST '@'; the password after the first ':' in it.
  for (const std::string password : {"pa/ss", "p@ss", "p?ss", "p#ss", "p+ss", "a/b@c?d#e+f:g"}) {
    const Options o = parse_url("redis://user:" + password + "@127.0.0.1:6390/5");
    EXPECT_EQ(o.username, "user") << password;
    EXPECT_EQ(o.password, password);
    EXPECT_EQ(o.host, "127.0.0.1") << password;
    EXPECT_EQ(o.port, 6390) << password;
    EXPECT_EQ(o.db, 5) << password;
  }
  EXPECT_EQ(parse_url("redis://user:%2F%40%3F%23%25%2B@h").password, "/@?#%+");
  EXPECT_EQ(parse_url("redis://user:@h").password, "");  // an empty password
  EXPECT_EQ(parse_url("redis://user:@h").username, "user");
  EXPECT_EQ(parse_url("redis://only-password@h").password, "only-password");
  EXPECT_EQ(parse_url("redis://only-password@h").username, "");
  EXPECT_EQ(parse_url("redis://us%3Aer:pw@h").username, "us:er");
}

// The message of the UsageError parse_url throws for `url`; fails when it parses.
std::string error_of(const std::string& url) {
  try {
    parse_url(url);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << url << " parsed";
  return "";
}

TEST(RedisUrl, BadEscapesAreRefusedNamingThePart) {
  for (const char* url : {"redis://u:Sp4%4g@h", "redis://u:Sp4%@h", "redis://u:Sp4%zz@h",
                          "redis://:Sp4%4@h", "redis://Sp4%g1@h"}) {
    const std::string m = error_of(url);
    EXPECT_NE(m.find("bad percent-escape in the password"), std::string::npos) << m;
    EXPECT_EQ(m.find("Sp4"), std::string::npos) << m;
  }
  EXPECT_NE(error_of("redis://u%zz:pw@h").find("bad percent-escape in the user name"),
            std::string::npos);
  EXPECT_NE(error_of("redis://u:pw@h%4g").find("bad percent-escape in the host"),
            std::string::npos);
}

TEST(RedisUrl, BadUrlsNameThePartWithoutEchoingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://u:Sq1pw@h", "must start with redis://, rediss:// (TLS) or unix://"},
      {"redis:/u:Sq1pw@h", "must start with redis://, rediss:// (TLS) or unix://"},
      {"reddis://u:Sq1pw@h", "must start with redis://, rediss:// (TLS) or unix://"},
      {"u:Sq1pw@h:1/0", "must start with redis://, rediss:// (TLS) or unix://"},
      {"redisss://u:Sq1pw@h", "must start with redis://, rediss:// (TLS) or unix://"},
      {"redis://u:Sq1pw@", "no host"},
      {"redis://", "no host"},
      {"redis://u:Sq1pw@h:port", "bad port"},
      {"redis://u:Sq1pw@h:0", "bad port"},
      {"redis://u:Sq1pw@h:65536", "bad port"},
      {"redis://u:Sq1pw@h:99999999999", "bad port"},
      {"redis://u:Sq1pw@h:-1", "bad port"},
      {"redis://u:Sq1pw@h:", "empty port"},
      {"redis://u:Sq1pw@h:1/x", "bad database number"},
      {"redis://u:Sq1pw@h:1/-1", "bad database number"},
      {"redis://u:Sq1pw@h:1/0/", "bad database number"},
      {"redis://u:Sq1pw@h:1/0?timeout=1", "query or fragment"},
      {"redis://u:Sq1pw@h#x", "query or fragment"},
      {"redis://u:Sq1pw@::1:6379", "IPv6 host must be in brackets"},
      {"redis://u:Sq1pw@[::1:6379", "'[' of an IPv6 host is not closed"},
      {"redis://u:Sq1pw@[::1]6379", "after the ']'"},
      {"unix://", "needs a socket path"},
      {"unix://:Sq1pw@/run/redis.sock", "unix:// URL is not supported"},
      {"unix:///run/redis.sock?pw=Sq1pw", "unknown query"},
      {"unix:///run/redis.sock?db=x", "bad database number"},
  };
  for (const auto& [url, phrase] : cases) {
    const std::string m = error_of(url);
    EXPECT_EQ(m.rfind("redis URL: ", 0), 0U) << m;
    EXPECT_NE(m.find(phrase), std::string::npos) << url << ": " << m;
    EXPECT_EQ(m.find("Sq1"), std::string::npos) << url << ": " << m;
  }
}

TEST(RedisUrl, ParseUrlWithASourceEndsItsErrorWithTheSource) {
  EXPECT_EQ(parse_url("redis://h:7/2", " (from X)").db, 2);
  try {
    parse_url("redis://:Sq1pw@h:0", " (from BOARDKEEPER_REDIS_URL)");
    FAIL() << "a bad port must throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "redis URL: bad port (expected a number from 1 to 65535) (from "
              "BOARDKEEPER_REDIS_URL)");
  }
}

TEST(RedisUrl, SchemeProblemAcceptsTheThreeSchemesWithSomethingAfterThem) {
  for (const char* url : {"redis://h", "rediss://h:1/2", "unix:///run/r.sock", "redis://x"}) {
    EXPECT_EQ(scheme_problem(url), std::nullopt) << url;
  }
  EXPECT_EQ(scheme_problem("http://u:Sq1pw@h"),
            "is not a Redis URL (it starts with 'http://'); expected "
            "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or "
            "unix:///path/to/socket[?db=N]");
  for (const char* url : {"redis://", "rediss://", "unix://", "", "Sq1pw", "h:6379"}) {
    const auto problem = scheme_problem(url);
    ASSERT_TRUE(problem.has_value()) << url;
    EXPECT_EQ(problem->rfind("is not a Redis URL (", 0), 0U) << *problem;
  }
  EXPECT_NE(scheme_problem("h:6379")->find("(it starts with 'h:')"), std::string::npos);
  EXPECT_NE(scheme_problem("//Sq1pw@h")->find("(it has no scheme)"), std::string::npos);
}

TEST(RedisUrl, SeedProblemWantsTcpAndTheUrlsScheme) {
  EXPECT_EQ(seed_problem("redis://10.0.0.2:6379", "redis://10.0.0.1:6379"), std::nullopt);
  EXPECT_EQ(seed_problem("rediss://10.0.0.2:6379", "rediss://10.0.0.1:6379"), std::nullopt);
  EXPECT_EQ(seed_problem("unix:///run/r.sock", "redis://h"),
            "each seed must be a redis:// or rediss:// URL (host and port), but it starts with "
            "'unix://'");
  EXPECT_NE(seed_problem("redis://", "redis://h")->find("each seed must be"), std::string::npos);
  EXPECT_EQ(seed_problem("rediss://h2", "redis://h"),
            "a seed's scheme must be the url's (redis://): every node of a cluster is reached "
            "the same way");
  EXPECT_EQ(seed_problem("redis://h2", "rediss://h"),
            "a seed's scheme must be the url's (rediss://): every node of a cluster is reached "
            "the same way");
}

TEST(RedisUrl, ClusterUrlProblemRefusesSocketsAndDatabasesOtherThanZero) {
  for (const char* url : {"redis://h:1", "redis://h:1/", "redis://h:1/0", "rediss://a/b@h:1/0"}) {
    EXPECT_EQ(cluster_url_problem(url), std::nullopt) << url;
  }
  EXPECT_EQ(cluster_url_problem("unix:///run/r.sock"),
            "a Redis Cluster is reached over TCP (redis://host:port), not a unix socket");
  for (const char* url : {"redis://h:1/3", "redis://u:p/1@h/00", "rediss://h/x"}) {
    EXPECT_EQ(cluster_url_problem(url),
              "a Redis Cluster has only database 0; remove the /db from the URL")
        << url;
  }
}

}  // namespace
TEST(Version, RedisBefore7IsRefusedWithItsVersion) {
  EXPECT_EQ(version_problem("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"),
            std::nullopt);
  EXPECT_EQ(version_problem("# Server\r\nredis_version:7.2.4\r\n"), std::nullopt);
  const auto old = version_problem("# Server\r\nredis_version:6.2.14\r\nredis_git_sha1:0\r\n");
  ASSERT_TRUE(old.has_value());
  EXPECT_NE(old->find("Redis 6.2.14; boardkeeper needs Redis 7.0 or newer"), std::string::npos)
      << *old;
  EXPECT_TRUE(version_problem("# Server\r\n").has_value());
}

}  // namespace bk::redis
