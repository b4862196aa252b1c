// The hiredis wrapper against a real Redis: typed replies, pipelines that read every reply,
// scripts that survive SCRIPT FLUSH, and errors mapped to the right exception types.
#include "redis/connection.h"

#include <gtest/gtest.h>

#include "harness.h"
#include "redis/error.h"
#include "redis/script.h"

namespace bk::redis {
namespace {

TEST(Connection, TypedRepliesAndBinarySafeArguments) {
  Connection c = test::connect_redis();
  const std::string key = test::unique_prefix() + ":k";
  const std::string binary("a\0b\r\n", 5);
  EXPECT_EQ(c.command({"SET", key, binary, "PX", "60000"}).as_string(), "OK");
  EXPECT_EQ(c.command({"GET", key}).as_string(), binary);
  EXPECT_TRUE(c.command({"GET", key + "missing"}).is_nil());
  EXPECT_EQ(c.command({"STRLEN", key}).as_int(), 5);
  const Reply err = c.command({"INCR", key});
  EXPECT_TRUE(err.is_error());
  EXPECT_THROW(err.checked(), ReplyError);
  EXPECT_THROW(c.command({"GET", key}).as_int(), ReplyError);
}

TEST(Connection, PipelineReadsEveryReplyInOrderEvenAfterAnError) {
  Connection c = test::connect_redis();
  const std::string key = test::unique_prefix() + ":p";
  const auto replies = c.pipeline({{"SET", key, "x", "PX", "60000"},
                                   {"INCR", key},  // error: not an integer
                                   {"APPEND", key, "yz"},
                                   {"GET", key}});
  ASSERT_EQ(replies.size(), 4U);
  EXPECT_TRUE(replies[1].is_error());
  EXPECT_EQ(replies[2].as_int(), 3);
  EXPECT_EQ(replies[3].as_string(), "xyz");
  // The connection is still aligned afterwards.
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
}

TEST(Script, ReloadsAfterScriptFlush) {
  Connection c = test::connect_redis();
  Script s("return tonumber(ARGV[1]) * 2");
  EXPECT_EQ(s.eval(c, {}, {"21"}).as_int(), 42);
  c.command({"SCRIPT", "FLUSH"}).checked();
  EXPECT_EQ(s.eval(c, {}, {"5"}).as_int(), 10);
  c.command({"SCRIPT", "FLUSH"}).checked();
  const auto replies = s.eval_pipelined(c, {{{}, {"1"}}, {{}, {"2"}}, {{}, {"3"}}});
  ASSERT_EQ(replies.size(), 3U);
  EXPECT_EQ(replies[0].as_int(), 2);
  EXPECT_EQ(replies[2].as_int(), 6);
}

TEST(Connection, UnreachableServerIsAConnectionError) {
  Options o = parse_url("redis://127.0.0.1:1/0");
  EXPECT_THROW(Connection{o}, ConnectionError);
  try {
    Connection{o};
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::unavailable);
  }
}

TEST(Connection, CommandTimeoutIsATimeoutError) {
  Options o = parse_url(test::redis_url());
  o.command_timeout = Millis{200};
  Connection c(o);
  // BLPOP on an empty key blocks for 2s on the server; the client gives up at 200ms.
  EXPECT_THROW(c.command({"BLPOP", test::unique_prefix() + ":empty", "2"}), TimeoutError);
  // A timed-out connection is not reused: later commands fail fast rather than misread.
  EXPECT_THROW(c.command({"PING"}), ConnectionError);
}

TEST(Connection, WrongPasswordFailsWithoutShowingIt) {
  Options o = parse_url(test::redis_url());
  o.password = "not-the-password";
  try {
    Connection c(o);
    ADD_FAILURE() << "connected with a password the server does not have";
  } catch (const ConnectionError& e) {
    EXPECT_EQ(std::string(e.what()).find("not-the-password"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bk::redis
