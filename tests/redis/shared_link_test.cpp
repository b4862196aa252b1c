// One connection shared by many threads (redis/shared_link.h), against a real Redis: under
// concurrent load every call gets its own replies, in order, in shared writes; an error
// reply answers only the call that sent it; a frozen server costs each call its timeout and
// a restarted one is reconnected; a Connection over the link keeps its documented behaviour.
#include "redis/shared_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/shun.h"
#include "harness.h"
#include "redis/error.h"
#include "redis/script.h"

namespace bk::redis {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Runs f(t) on `threads` threads at once; returns the first failure each reported, joined.
template <class F>
std::string on_threads(int threads, F f) {
  std::vector<std::string> failures(static_cast<std::size_t>(threads));
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      try {
        f(t, failures[static_cast<std::size_t>(t)]);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = std::string("threw: ") + e.what();
      }
    });
  }
  for (auto& th : running) th.join();
  std::string all;
  for (const auto& failure : failures) {
    if (!failure.empty()) all += failure + "\n";
  }
  return all;
}

// PING until the link answers (it reconnects at a call) or `limit` passes: "" then.
std::string pong_within(SharedLink& link, std::chrono::seconds limit) {
  const auto until = SteadyClock::now() + limit;
  while (SteadyClock::now() < until) {
    try {
      return link.call({{"PING"}})[0].as_string();
    } catch (const ConnectionError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return "";
}

TEST(SharedLink, EveryCallGetsItsOwnRepliesInOrderInSharedWrites) {
  SharedLink link(parse_url(test::redis_url()));
  const std::string prefix = test::unique_prefix();
  constexpr int kThreads = 16;
  constexpr int kCalls = 400;
  const std::string failures = on_threads(kThreads, [&](int t, std::string& failure) {
    const std::string counter = prefix + ":n" + std::to_string(t);
    for (int i = 0; i < kCalls && failure.empty(); ++i) {
      const std::string mine = std::to_string(t) + ":" + std::to_string(i);
      // One to three commands a call, so calls of different lengths share round trips.
      std::vector<Args> cmds{{"INCR", counter}, {"ECHO", mine}, {"GET", counter}};
      cmds.resize(static_cast<std::size_t>(1 + (i + t) % 3));
      const std::vector<Reply> r = link.call(cmds);
      if (r.size() != cmds.size())
        failure = mine + ": " + std::to_string(r.size()) + " replies";
      else if (r[0].as_int() != i + 1)
        failure = mine + ": INCR gave " + std::to_string(r[0].as_int());
      else if (r.size() > 1 && r[1].as_string() != mine)
        failure = mine + ": ECHO " + r[1].as_string();
      else if (r.size() > 2 && r[2].as_string() != std::to_string(i + 1))
        failure = mine + ": GET " + r[2].as_string();
    }
  });
  EXPECT_EQ(failures, "");
  const SharedLink::Stats s = link.stats();
  EXPECT_EQ(s.calls, static_cast<std::uint64_t>(kThreads * kCalls));
  // Sixteen threads calling all the time: calls wait at the server together, and some share
  // a write (one each would be 6,400).
  EXPECT_GE(s.deepest, 4U);
  EXPECT_LT(s.writes, s.calls) << s.writes << " writes";
  EXPECT_EQ(link.generation(), 1U);  // one connection did it all
}

TEST(SharedLink, AnErrorReplyAnswersOnlyTheCallThatSentIt) {
  SharedLink link(parse_url(test::redis_url()));
  const std::string prefix = test::unique_prefix();
  const std::string text = prefix + ":text";
  link.call({{"SET", text, "not a number", "PX", "60000"}});
  std::atomic<int> errors{0};
  const std::string failures = on_threads(8, [&](int t, std::string& failure) {
    for (int i = 0; i < 300 && failure.empty(); ++i) {
      const std::string mine = std::to_string(t) + ":" + std::to_string(i);
      if (t % 2 == 0 && i % 3 == 0) {
        // The refused command sits between two good ones of the same call.
        const auto r = link.call({{"ECHO", mine}, {"INCR", text}, {"ECHO", mine + "b"}});
        if (!r[1].is_error() || r[1].str.find("not an integer") == std::string::npos)
          failure = mine + ": INCR of text answered " + r[1].str;
        else if (r[0].as_string() != mine || r[2].as_string() != mine + "b")
          failure = mine + ": the good commands around the error were not answered";
        else
          ++errors;
        continue;
      }
      const auto r = link.call({{"ECHO", mine}});
      if (r.size() != 1 || r[0].is_error() || r[0].as_string() != mine)
        failure = mine + ": answered " + (r.empty() ? "nothing" : r[0].str);
    }
  });
  EXPECT_EQ(failures, "");
  EXPECT_EQ(errors.load(), 4 * 100);
}

// What the service holds: a Connection. Over the link it pipelines, sends and receives,
// reloads a flushed script, and never needs a reconnect.
TEST(SharedLink, AConnectionOverTheLinkKeepsItsBehaviour) {
  auto link = std::make_shared<SharedLink>(parse_url(test::redis_url()));
  Connection c(link);
  EXPECT_TRUE(c.connected());
  const std::string key = test::unique_prefix() + ":k";
  const auto replies = c.pipeline({{"SET", key, "v", "PX", "60000"}, {"GET", key}});
  EXPECT_EQ(replies[1].as_string(), "v");
  c.send({{"ECHO", "one"}, {"ECHO", "two"}});
  EXPECT_EQ(c.receive().as_string(), "one");
  EXPECT_EQ(c.receive().as_string(), "two");
  EXPECT_THROW(c.receive(), ConnectionError);
  EXPECT_EQ(c.masters(), 1U);
  EXPECT_EQ(c.master_command(0, {"PING"}).as_string(), "PONG");

  Script echo("return ARGV[1]");
  EXPECT_EQ(echo.eval(c, {}, {"first"}).as_string(), "first");
  c.command({"SCRIPT", "FLUSH"}).checked();
  EXPECT_EQ(echo.eval(c, {}, {"again"}).as_string(), "again");

  bool waited = false;
  c.pipeline({{"PING"}}, [&] { waited = true; });
  EXPECT_TRUE(waited);
  Connection other(link);  // a second holder: the same connection, the same generation
  EXPECT_EQ(other.command({"CLIENT", "ID"}).as_int(), c.command({"CLIENT", "ID"}).as_int());
  EXPECT_EQ(other.generation(), c.generation());
}

TEST(SharedLink, AFrozenServerCostsEachCallItsTimeoutAndAThawedOneServesAgain) {
  test::RedisServer server;
  Options o = parse_url(server.url());
  o.command_timeout = Millis{300};
  o.connect_timeout = Millis{300};
  o.shuns = std::make_shared<Shuns>();
  SharedLink link(o);
  ASSERT_EQ(link.call({{"PING"}})[0].as_string(), "PONG");
  server.freeze();
  std::vector<double> took(8);
  std::atomic<int> timeouts{0};
  on_threads(8, [&](int t, std::string&) {
    const auto t0 = SteadyClock::now();
    try {
      link.call({{"PING"}});
    } catch (const TimeoutError&) {
      ++timeouts;
    }
    took[static_cast<std::size_t>(t)] =
        std::chrono::duration<double>(SteadyClock::now() - t0).count();
  });
  server.thaw();
  EXPECT_EQ(timeouts.load(), 8);
  // Its timeout (0.3 s), never one per caller queued before it (2.4 s).
  for (double s : took) EXPECT_LT(s, 1.0);

  // The shun lets the server rest a moment; then the next leader connects again.
  EXPECT_EQ(pong_within(link, std::chrono::seconds(10)), "PONG");
  EXPECT_GE(link.generation(), 2U);
}

TEST(SharedLink, ARestartedServerFailsTheCallsAtItThenIsReconnected) {
  test::RedisServer server;
  SharedLink link(parse_url(server.url()));
  link.call({{"SET", "k", "v"}});
  server.stop();
  EXPECT_THROW(link.call({{"GET", "k"}}), ConnectionError);
  server.start();
  EXPECT_EQ(pong_within(link, std::chrono::seconds(10)), "PONG");
}

// Each call costs the server 100 ms: ten callers at once cannot all be answered within their
// 300 ms. Whoever leads still ends by its own deadline (plus the one read in progress), not
// after reading the replies of callers before it who gave up.
TEST(SharedLink, ABusyServerCostsEachCallerItsDeadlineNotTheRepliesOfThoseBeforeIt) {
  test::RedisServer server;
  Options o = parse_url(server.url());
  o.command_timeout = Millis{300};
  SharedLink link(o);
  ASSERT_EQ(pong_within(link, std::chrono::seconds(5)), "PONG");
  const std::string busy =
      "local function ms() local t = redis.call('TIME') return t[1] * 1000 + t[2] / 1000 end "
      "local t0 = ms() while ms() - t0 < 100 do end return 1";
  std::vector<double> took(10);
  on_threads(10, [&](int t, std::string&) {
    const auto t0 = SteadyClock::now();
    try {
      link.call({{"EVAL", busy, "0"}});
    } catch (const TimeoutError&) {
    }
    took[static_cast<std::size_t>(t)] =
        std::chrono::duration<double>(SteadyClock::now() - t0).count();
  });
  for (double s : took) EXPECT_LT(s, 0.7);  // 0.3 + one 0.1 read + scheduling; 1 s unbounded
  EXPECT_EQ(pong_within(link, std::chrono::seconds(5)), "PONG");
}

// A failure keeps its class for every caller it fails: a killed connection is a ClosedError.
TEST(SharedLink, AKilledConnectionIsAClosedErrorAndTheNextCallReconnects) {
  SharedLink link(parse_url(test::redis_url()));
  const std::int64_t id = link.call({{"CLIENT", "ID"}})[0].as_int();
  Connection killer = test::connect_redis();
  killer.command({"CLIENT", "KILL", "ID", std::to_string(id)}).checked();
  EXPECT_THROW(link.call({{"PING"}}), ClosedError);
  EXPECT_EQ(link.call({{"PING"}})[0].as_string(), "PONG");
  EXPECT_NE(link.call({{"CLIENT", "ID"}})[0].as_int(), id);
}

TEST(SharedLink, ACommandTooLongIsRefusedAloneAndAClusterIsRefused) {
  SharedLink link(parse_url(test::redis_url()));
  Args long_one{"MGET"};
  long_one.resize(kMaxCommandArguments + 1, "k");
  EXPECT_THROW(link.call({{"PING"}, long_one}), ReplyError);
  EXPECT_EQ(link.call({{"PING"}})[0].as_string(), "PONG");
  Options cluster = parse_url(test::redis_url());
  cluster.cluster = true;
  EXPECT_THROW(SharedLink{cluster}, std::invalid_argument);
}

}  // namespace
}  // namespace bk::redis
