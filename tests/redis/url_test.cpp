// Redis URL parsing.
#include "redis/url.h"

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

TEST(RedisUrl, BadUrlsAreUsageErrorsWithoutThePassword) {
  for (const char* bad : {"http://h", "redis://h:port", "redis://h:1/x", "redis://", "unix://",
                          "redis://u:hunter2@h:99999999999"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace bk::redis
