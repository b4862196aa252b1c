// The hiredis wrapper against a real Redis: typed replies, pipelines that read every reply,
// scripts that survive SCRIPT FLUSH, errors mapped to the right exception types, and
// reconnection in place.
#include "redis/connection.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "cold/error.h"
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

// Replies are built by hiredis's reader straight into Reply trees: every type, nested
// arrays with nil, empty and error elements, a status, and a large array, in one pipeline.
TEST(Connection, NestedRepliesKeepEveryElementTypeAndOrder) {
  Connection c = test::connect_redis();
  const auto replies =
      c.pipeline({{"EVAL",
                   "return {1, 'two', {3, {}, {'deep', false}}, redis.error_reply('ERR inner'), "
                   "redis.status_reply('FINE'), 'last'}",
                   "0"},
                  {"EVAL", "local t = {} for i = 1, 5000 do t[i] = tostring(i) end return t", "0"},
                  {"PING"}});
  ASSERT_EQ(replies.size(), 3U);
  const Reply& r = replies[0];
  ASSERT_EQ(r.type, Reply::Type::array);
  ASSERT_EQ(r.elements.size(), 6U);
  EXPECT_EQ(r.at(0).as_int(), 1);
  EXPECT_EQ(r.at(1).as_string(), "two");
  const Reply& nested = r.at(2);
  ASSERT_EQ(nested.elements.size(), 3U);
  EXPECT_EQ(nested.at(0).as_int(), 3);
  EXPECT_EQ(nested.at(1).type, Reply::Type::array);
  EXPECT_TRUE(nested.at(1).elements.empty());
  ASSERT_EQ(nested.at(2).elements.size(), 2U);
  EXPECT_EQ(nested.at(2).at(0).as_string(), "deep");
  EXPECT_TRUE(nested.at(2).elements[1].is_nil());  // Lua false is a nil bulk
  EXPECT_TRUE(r.elements[3].is_error());
  EXPECT_EQ(r.elements[3].str, "ERR inner");
  EXPECT_EQ(r.elements[4].type, Reply::Type::status);
  EXPECT_EQ(r.elements[4].str, "FINE");
  EXPECT_EQ(r.at(5).as_string(), "last");
  ASSERT_EQ(replies[1].elements.size(), 5000U);
  for (std::size_t i = 0; i < 5000; ++i) {
    ASSERT_EQ(replies[1].at(i).as_string(), std::to_string(i + 1));
  }
  EXPECT_EQ(replies[2].as_string(), "PONG");
}

// while_waiting runs once, after every command reached the server and before a reply is
// read: another connection already sees the writes, and the replies still come in order.
TEST(Connection, APipelinesWaitRunsOnceWithEveryCommandSentAndNoReplyRead) {
  Connection c = test::connect_redis();
  Connection other = test::connect_redis();
  const std::string key = test::unique_prefix() + ":w";
  int runs = 0;
  std::string seen;
  const auto replies = c.pipeline({{"SET", key, "1", "PX", "60000"}, {"INCR", key}}, [&] {
    ++runs;
    // The server runs commands in order; a command of another connection sent now waits
    // for nothing of this one to be read.
    for (int i = 0; i < 200 && seen != "2"; ++i) {
      const Reply got = other.command({"GET", key});  // nil until the SET has run
      seen = got.is_nil() ? "" : got.as_string();
      if (seen != "2") usleep(1000);
    }
  });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(seen, "2");
  ASSERT_EQ(replies.size(), 2U);
  EXPECT_EQ(replies[0].as_string(), "OK");
  EXPECT_EQ(replies[1].as_int(), 2);
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");

  // Sent now, read later, in order.
  c.send({{"INCR", key}, {"GET", key}});
  EXPECT_EQ(c.receive().as_int(), 3);
  EXPECT_EQ(c.receive().as_string(), "3");
}

// A wait that throws leaves replies unread: the connection is dropped, not left misaligned.
TEST(Connection, APipelineWhoseWaitThrowsDropsTheConnection) {
  Connection c = test::connect_redis();
  EXPECT_THROW(c.pipeline({{"PING"}}, [] { throw Error("no"); }), Error);
  EXPECT_FALSE(c.connected());
  EXPECT_THROW(c.command({"PING"}), ConnectionError);
  c.reconnect();
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
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
  EXPECT_FALSE(c.connected());
  c.reconnect();
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
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

TEST(Connection, ReconnectReplacesAKilledConnectionInPlaceWithTheSameSession) {
  Options o = parse_url(test::redis_url());
  o.db = 3;  // SELECTed again on the new connection
  Connection c(o);
  const std::string key = test::unique_prefix() + ":db3";
  c.command({"SET", key, "here", "PX", "60000"}).checked();
  const std::uint64_t generation = c.generation();
  Connection killer = test::connect_redis();
  killer.command({"CLIENT", "KILL", "ID", std::to_string(c.command({"CLIENT", "ID"}).as_int())})
      .checked();
  EXPECT_THROW(c.command({"PING"}), ClosedError);
  EXPECT_FALSE(c.connected());
  EXPECT_THROW(c.command({"PING"}), ConnectionError);  // fails fast until reconnected

  Connection& held = c;  // what a holder (the service layer) keeps
  c.reconnect();
  EXPECT_TRUE(held.connected());
  EXPECT_EQ(c.generation(), generation + 1);
  EXPECT_EQ(held.command({"GET", key}).as_string(), "here");
  EXPECT_EQ(held.command({"CLIENT", "GETNAME"}).as_string(),
            "boardkeeper:" + std::to_string(getpid()));
}

TEST(Connection, ALaterConnectionConnectsAtItsFirstReconnect) {
  Connection c(parse_url(test::redis_url()), Connect::later);
  EXPECT_FALSE(c.connected());
  EXPECT_THROW(c.command({"PING"}), ConnectionError);
  c.reconnect();
  EXPECT_TRUE(c.connected());
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");

  // Unreachable: the connection stays unusable, and says so the same way.
  Connection gone(parse_url("redis://127.0.0.1:1/0"), Connect::later);
  EXPECT_THROW(gone.reconnect(), ConnectionError);
  EXPECT_FALSE(gone.connected());
}

// "Which server, and is it worth retrying" is one look at any error of the tree.
TEST(Errors, EachServerHasOneTreeThatSaysWhetherToRetry) {
  Connection c = test::connect_redis();
  const std::string key = test::unique_prefix() + ":s";
  c.command({"SET", key, "x", "PX", "60000"}).checked();
  try {
    c.command({"INCR", key}).checked();
    ADD_FAILURE() << "no error";
  } catch (const RedisError& e) {
    EXPECT_NE(dynamic_cast<const ReplyError*>(&e), nullptr);
    EXPECT_EQ(e.backend(), Backend::redis);
    EXPECT_FALSE(e.transient());
    EXPECT_EQ(e.exit_code(), ExitCode::failed);
  }
  try {
    const Connection unreachable(parse_url("redis://127.0.0.1:1/0"));
    ADD_FAILURE() << "connected to port 1";
  } catch (const UnavailableError& e) {  // caught as every server's "unavailable"
    EXPECT_EQ(e.backend(), Backend::redis);
    EXPECT_TRUE(e.transient());
    EXPECT_NE(dynamic_cast<const RedisError*>(&e), nullptr);
  }
  // Replies that mean "cannot serve now" are worth a retry on a new connection.
  for (const char* busy : {"LOADING Redis is loading the dataset in memory",
                           "READONLY You can't write against a read only replica.",
                           "BUSY Redis is busy running a script.", "MASTERDOWN Link down"}) {
    EXPECT_THROW(throw_reply_error(busy), ConnectionError) << busy;
  }
  // OOM at maxmemory too (since issue 31): memory comes back (keys expire, an operator
  // raises maxmemory), so the command is retried rather than failed for good. The full list
  // is in error_test.cpp.
  EXPECT_THROW(throw_reply_error("OOM command not allowed"), ConnectionError);
  EXPECT_THROW(throw_reply_error("NOGROUP No such key"), ReplyError);

  const cold::PostgresUnavailable down("postgresql at db:5432/boards: cannot connect");
  const Error& as_error = down;
  EXPECT_EQ(as_error.backend(), Backend::postgres);
  EXPECT_TRUE(as_error.transient());
  EXPECT_NE(dynamic_cast<const UnavailableError*>(&as_error), nullptr);
  const cold::PostgresError failed("statement failed");
  EXPECT_EQ(failed.backend(), Backend::postgres);
  EXPECT_FALSE(failed.transient());
  EXPECT_EQ(UsageError("bad").backend(), Backend::none);
}

}  // namespace
}  // namespace bk::redis
