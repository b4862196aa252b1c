// The one redaction of secrets and the one percent-decoder. The registry is process-wide:
// each test uses secrets of its own, so the order the tests run in does not matter.
#include "core/redact.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/percent.h"

namespace bk {
namespace {

// ---- percent_decode ----------------------------------------------------------------------

TEST(PercentDecode, DecodesEveryEscapeOfTwoHexDigits) {
  EXPECT_EQ(percent_decode("p%40ss%2Fw%3Fr%23d%25%2B+"), "p@ss/w?r#d%++");
  EXPECT_EQ(percent_decode("%4a%4A"), "JJ");
  EXPECT_EQ(percent_decode(""), "");
  EXPECT_EQ(percent_decode("plain"), "plain");
  EXPECT_EQ(percent_decode("%00"), std::string(1, '\0'));
}

TEST(PercentDecode, RefusesAPercentNotFollowedByTwoHexDigits) {
  for (const char* bad : {"%4g", "ab%4gcd", "%", "abc%", "%z", "%zz", "%a", "a%%20", "%-1"}) {
    EXPECT_FALSE(percent_decode(bad).has_value()) << bad;
  }
}

// ---- redact ------------------------------------------------------------------------------

TEST(Redact, HidesEveryRegisteredSecretLongestFirst) {
  add_secret("Qz1short");
  add_secret("Qz1short-and-long");
  EXPECT_EQ(redact("a Qz1short-and-long b Qz1short c Qz1short"), "a *** b *** c ***");
  EXPECT_EQ(redact("nothing here"), "nothing here");
  add_secret("");  // ignored
  EXPECT_EQ(redact("nothing here"), "nothing here");
}

TEST(Redact, HidesTheJsonEscapedFormToo) {
  add_secret("Qz2\"quo\\te");
  EXPECT_EQ(redact(R"({"msg":"auth Qz2\"quo\\te failed"})"), R"({"msg":"auth *** failed"})");
}

TEST(Redact, UrlUserInfoPasswordsAsWrittenAndDecoded) {
  add_url_secrets("redis://app:Qz3p%2Fw%40x@cache:6379/0");
  EXPECT_EQ(redact("[Qz3p%2Fw%40x] [Qz3p/w@x]"), "[***] [***]");
  EXPECT_EQ(redact("app cache 6379"), "app cache 6379");  // the rest is not secret
}

TEST(Redact, UserInfoEndsAtTheLastAt) {
  // A raw '/', '@', '?', '#' or '+' in a password: everything up to the last '@'.
  add_url_secrets("redis://u:Qz4a/b@c?d#e+f@127.0.0.1:1/0");
  EXPECT_EQ(redact("Qz4a/b@c?d#e+f"), "***");
  // The pieces a parser could cut it into, from 3 characters on.
  EXPECT_EQ(redact("port Qz4a, host c?d#e+f"), "port ***, host c?d#***");
  // postgresql://bkuser:PGs3cret/pa/ss@...: libpq reads port "PGs3cret" from this.
  add_url_secrets("postgresql://bkuser:Qz5PGs3cret/pa/ss@127.0.0.1:59871/boards");
  EXPECT_EQ(redact("invalid integer value \"Qz5PGs3cret\" for connection option \"port\""),
            "invalid integer value \"***\" for connection option \"port\"");
  EXPECT_EQ(redact("bkuser 127.0.0.1 59871 boards"), "bkuser 127.0.0.1 59871 boards");
}

TEST(Redact, BarePasswordsAndUserNames) {
  add_url_secrets("redis://Qz6bare@h:1");  // redis: a bare user info is the password
  EXPECT_EQ(redact("Qz6bare"), "***");
  add_url_secrets("postgresql://Qz7user@h/db");  // postgresql: it is the user name
  EXPECT_EQ(redact("Qz7user"), "Qz7user");
  add_url_secrets("postgresql://Qz8user:@h/db");  // an empty password
  EXPECT_EQ(redact("Qz8user"), "Qz8user");
  add_url_secrets("reddis://Qz9typo@h");  // a mistyped scheme: could be either
  EXPECT_EQ(redact("Qz9typo"), "***");
}

TEST(Redact, MalformedUrlsStillHaveTheirPasswordsRegistered) {
  for (const char* url : {"redis:/u:Qy1pw@h:1/0", "u:Qy2pw@h:1/0", "postgres:/bk:Qy3pw@h/db",
                          "redis://u:Qy4p%4gw@h", "redis://u:Qy5p%w@h", "http://u:Qy6pw@[::1:1"}) {
    add_url_secrets(url);
    const std::string text(url);
    const std::size_t at = text.find("Qy");
    const std::string password = text.substr(at, text.find('@', at) - at);
    EXPECT_EQ(redact(password).find("Qy"), std::string::npos) << url;
  }
  EXPECT_EQ(redact("Qy4p%4gw Qy5p%w"), "*** ***");
}

TEST(Redact, PasswordParameters) {
  add_url_secrets("postgresql://bk@db/boards?password=Qx1pw%2Bz&sslmode=require");
  EXPECT_EQ(redact("Qx1pw%2Bz Qx1pw+z"), "*** ***");
  EXPECT_EQ(redact("sslmode=require"), "sslmode=require");
  add_url_secrets(R"(host=db user=bk password='Qx2 a\'b' dbname=x)");
  EXPECT_EQ(redact("Qx2 a'b"), "***");
  add_url_secrets("host=db sslpassword = Qx3pw port=1");
  EXPECT_EQ(redact("password Qx3pw, port=1"), "password ***, port=1");
}

TEST(Redact, IsSafeFromManyThreads) {
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        add_secret("Qw" + std::to_string(t) + "-" + std::to_string(i) + "secret");
        EXPECT_EQ(redact("Qw" + std::to_string(t) + "-" + std::to_string(i) + "secret"), "***");
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

// ---- redact_url --------------------------------------------------------------------------

TEST(RedactUrl, HidesPasswords) {
  EXPECT_EQ(redact_url("redis://user:secret@host:6379/0"), "redis://user:***@host:6379/0");
  EXPECT_EQ(redact_url("redis://:secret@host"), "redis://:***@host");
  EXPECT_EQ(redact_url("postgresql://bk:s3cr@t@db:5432/boards"),
            "postgresql://bk:***@db:5432/boards");
  EXPECT_EQ(redact_url("redis://u:pa/ss@h/0"), "redis://u:***@h/0");
  EXPECT_EQ(redact_url("postgresql://bk@db/boards?password=secret&sslmode=require"),
            "postgresql://bk@db/boards?password=***&sslmode=require");
  EXPECT_EQ(redact_url("host=db user=bk password='a b' dbname=x"),
            "host=db user=bk password=*** dbname=x");
  EXPECT_EQ(redact_url("host=db sslpassword = x"), "host=db sslpassword = ***");
  EXPECT_EQ(redact_url("redis://secret@host"), "redis://***@host");
  EXPECT_EQ(redact_url("http://user:pw@gateway:9091"), "http://user:***@gateway:9091");
}

TEST(RedactUrl, LeavesUrlsWithoutPasswordsAlone) {
  for (const char* url :
       {"redis://127.0.0.1:6379/0", "postgresql://boardkeeper@127.0.0.1:5432/boards",
        "unix:///run/redis.sock?db=2", "postgres://db/x?sslmode=require", "", "not a url"}) {
    EXPECT_EQ(redact_url(url), url);
  }
}

}  // namespace
}  // namespace bk
