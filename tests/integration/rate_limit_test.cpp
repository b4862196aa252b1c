// serve.rate_limits through a running serve on real Redis and PostgreSQL: beyond a token's
// burst a 429 JSON error with Retry-After and RateLimit-*, answered before the body (a
// refused write applies nothing), and 200 again once Retry-After has passed; successful
// answers of a limited class carry RateLimit-*; probes and the console are never limited;
// a member's writes have a bucket of their own; a batch pays one write per event, per token
// and per member, all or nothing, and one larger than a burst is a 413; and limits hold per
// serve process: two
// processes on the same Redis and PostgreSQL each admit their own burst (docs/operations.md).
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "served.h"

namespace bk {
namespace {

using test::Served;

const char* const kBoards = test::kOneBoard;

constexpr const char* kNow = "2026-11-25T12:00:00Z";
const std::string kReader = "reader-token-8e21";
const std::string kOtherReader = "reader-token-47bc";
const std::string kWriter = "writer-token-c0d5";

class RateLimitTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string log = "/tmp/" + prefix + "-serve.log";

  std::string config_with(const std::string& limits) {
    const std::string path = test::write_text_config(
        prefix, test::config_text(prefix, kBoards) + "serve:\n  rate_limits:\n" + limits);
    EXPECT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
    return path;
  }
  Served serve(const std::string& config, const std::string& log_path) {
    return Served(config, log_path, kNow,
                  {{"BOARDKEEPER_SERVE_TOKENS", kReader + "," + kOtherReader},
                   {"BOARDKEEPER_SERVE_WRITE_TOKENS", kWriter}});
  }
  static httplib::Result get(Served& s, const std::string& target, const std::string& token) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(10, 0);
    return c.Get(target.c_str(), {{"Authorization", "Bearer " + token}});
  }
  static httplib::Result write(Served& s, const std::string& member) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(10, 0);
    return c.Post(("/v1/boards/pts/members/" + member + "/scores").c_str(),
                  {{"Authorization", "Bearer " + kWriter}}, R"({"value": 1})", "application/json");
  }
  // A batch of one event (value 1) for each of `members`, in order.
  static httplib::Result batch(Served& s, const std::vector<std::string>& members) {
    std::string events;
    for (const std::string& m : members) {
      events += (events.empty() ? "" : ",") + std::string(R"({"board": "pts", "member": ")") + m +
                R"(", "value": 1})";
    }
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(10, 0);
    return c.Post("/v1/events", {{"Authorization", "Bearer " + kWriter}},
                  "{\"events\": [" + events + "]}", "application/json");
  }
  static std::string points_of(Served& s, const std::string& member) {
    const auto r = get(s, "/v1/boards/pts/daily/members/" + member, kReader);
    if (!r || r->status != 200) return "none";
    const auto at = r->body.find(R"("points":)");
    return r->body.substr(at + 9, r->body.find_first_of(",}", at) - at - 9);
  }
  // How many of `n` reads of the top page by `token` got 200 before the first 429.
  static int burst_of(Served& s, const std::string& token, int n) {
    for (int i = 0; i < n; ++i) {
      const auto r = get(s, "/v1/boards/pts/daily/top", token);
      if (!r) return -1;
      if (r->status == 429) return i;
    }
    return n;
  }
};

TEST_F(RateLimitTest, BeyondTheBurstA429WithItsHeadersThenRecoveryAfterRetryAfter) {
  Served s = serve(config_with("    read: {rate: 1/s, burst: 3}\n"), log);
  for (const std::string left : {"2", "1", "0"}) {
    const auto r = get(s, "/v1/boards/pts/daily/top", kReader);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("RateLimit-Limit"), "3");
    EXPECT_EQ(r->get_header_value("RateLimit-Remaining"), left);
    EXPECT_GE(r->get_header_value<std::uint64_t>("RateLimit-Reset"), 1U);
  }
  const auto refused = get(s, "/v1/boards/pts/daily/top", kReader);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(refused->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(refused->body.find(R"({"error":"too many requests: this token's read limit)"),
            std::string::npos)
      << refused->body;
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_EQ(refused->get_header_value("RateLimit-Limit"), "3");
  EXPECT_EQ(refused->get_header_value("RateLimit-Remaining"), "0");
  EXPECT_GE(refused->get_header_value<std::uint64_t>("RateLimit-Reset"), 1U);
  EXPECT_EQ(get(s, "/v1/boards/pts/daily/top", kOtherReader)->status, 200) << "its own bucket";
  for (int i = 0; i < 10; ++i) {
    for (const char* probe : {"/healthz", "/readyz", "/metrics", "/console/"}) {
      const auto r = get(s, probe, kReader);
      ASSERT_TRUE(r);
      EXPECT_NE(r->status, 429) << probe << " is never limited";
      EXPECT_FALSE(r->has_header("RateLimit-Limit")) << probe;
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto again = get(s, "/v1/boards/pts/daily/top", kReader);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200) << "after Retry-After: " << again->body;
  const std::string metrics = get(s, "/metrics", "")->body;
  EXPECT_NE(metrics.find(R"(boardkeeper_http_rate_limited_total{class="read"} 1)"),
            std::string::npos)
      << metrics;
}

TEST_F(RateLimitTest, AMembersWritesHaveABucketOfTheirOwnAndARefusedWriteAppliesNothing) {
  Served s = serve(config_with("    write: {rate: 1/m, burst: 4}\n"
                               "    write_per_member: {rate: 1/m, burst: 2}\n"),
                   log);
  EXPECT_EQ(write(s, "ann")->status, 200);
  EXPECT_EQ(write(s, "ann")->status, 200);
  const auto flood = write(s, "ann");
  ASSERT_TRUE(flood);
  EXPECT_EQ(flood->status, 429);
  EXPECT_NE(flood->body.find("this member's write limit"), std::string::npos) << flood->body;
  EXPECT_EQ(flood->get_header_value("Retry-After"), "60");
  EXPECT_EQ(write(s, "bob")->status, 200);
  const auto bob = write(s, "bob");
  EXPECT_EQ(bob->get_header_value("RateLimit-Remaining"), "0") << "the token's four, spent";
  const auto spent = write(s, "cat");
  EXPECT_EQ(spent->status, 429);
  EXPECT_NE(spent->body.find("this token's write limit"), std::string::npos) << spent->body;
  const auto ann = get(s, "/v1/boards/pts/daily/members/ann", kReader);
  ASSERT_TRUE(ann);
  EXPECT_NE(ann->body.find(R"("points":2)"), std::string::npos)
      << "the refused write applied nothing: " << ann->body;
  EXPECT_EQ(get(s, "/v1/boards/pts/daily/members/cat", kReader)->status, 404);
  const std::string metrics = get(s, "/metrics", "")->body;
  for (const char* line : {R"(boardkeeper_http_rate_limited_total{class="write"} 1)",
                           R"(boardkeeper_http_rate_limited_total{class="write_per_member"} 1)"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  }
}

// A batch costs one write per event (before any is applied, all or nothing): before this, a
// batch of any size cost one request, and write_per_member did not apply to batches.
TEST_F(RateLimitTest, ABatchPaysOneWritePerEventAllOrNothingAndOneBeyondTheBurstIsA413) {
  Served s = serve(config_with("    write: {rate: 1/m, burst: 5}\n"), log);
  const auto huge = batch(s, {"a", "b", "c", "d", "e", "f"});
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413) << huge->body;
  EXPECT_NE(huge->body.find("this batch's 6 events are more than this token's write limit "
                            "(serve.rate_limits.write, 5 at once) can ever hold"),
            std::string::npos)
      << huge->body;
  EXPECT_FALSE(huge->has_header("Retry-After")) << "no wait makes it pass";
  EXPECT_EQ(points_of(s, "a"), "none") << "nothing applied";
  const auto four = batch(s, {"a", "b", "c", "d"});
  ASSERT_TRUE(four);
  EXPECT_EQ(four->status, 200) << four->body;
  EXPECT_EQ(four->get_header_value("RateLimit-Remaining"), "1") << "the 413 took nothing";
  const auto two = batch(s, {"e", "f"});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->status, 429) << two->body;
  EXPECT_NE(two->body.find("this batch's 2 events (one request each) are more than this "
                           "token's write limit"),
            std::string::npos)
      << two->body;
  EXPECT_EQ(two->get_header_value("Retry-After"), "60") << "when the bucket holds 2 again";
  EXPECT_EQ(two->get_header_value("RateLimit-Remaining"), "1");
  EXPECT_EQ(points_of(s, "e"), "none") << "the refused batch applied nothing";
  EXPECT_EQ(write(s, "e")->status, 200) << "and took nothing: one write is left";
  EXPECT_EQ(write(s, "f")->status, 429);
  const std::string metrics = get(s, "/metrics", "")->body;
  EXPECT_NE(metrics.find(R"(boardkeeper_http_rate_limited_total{class="write"} 2)"),
            std::string::npos)
      << metrics;
}

TEST_F(RateLimitTest, ABatchPaysEachMembersBucketOnePerEventOfThatMember) {
  Served s = serve(config_with("    write: {rate: 1/m, burst: 100}\n"
                               "    write_per_member: {rate: 1/m, burst: 2}\n"),
                   log);
  const auto three = batch(s, {"ann", "bob", "ann", "ann"});
  ASSERT_TRUE(three);
  EXPECT_EQ(three->status, 413) << three->body;
  EXPECT_NE(three->body.find("3 of this batch's events are more than the write limit of member "
                             "'ann' of board 'pts' (serve.rate_limits.write_per_member, 2 at "
                             "once) can ever hold"),
            std::string::npos)
      << three->body;
  ASSERT_EQ(batch(s, {"ann", "bob", "ann"})->status, 200);
  const auto again = batch(s, {"bob", "ann"});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 429) << again->body;
  EXPECT_NE(again->body.find("the write limit of member 'ann' of board 'pts'"), std::string::npos)
      << again->body;
  EXPECT_EQ(points_of(s, "ann"), "2");
  EXPECT_EQ(points_of(s, "bob"), "1") << "bob's event in the refused batch was not applied";
  EXPECT_EQ(write(s, "bob")->status, 200) << "and took nothing from bob's bucket";
  EXPECT_EQ(write(s, "bob")->status, 429);
  EXPECT_EQ(write(s, "ann")->status, 429) << "ann's two were spent by the batch";
}

// The documented choice: a limit holds per serve process, counted in its memory (no Redis
// round trip on a read), so N replicas behind a balancer admit up to N times the rate.
TEST_F(RateLimitTest, TwoServeProcessesOnTheSameBackendsEachAdmitTheirOwnBurst) {
  const std::string config = config_with("    read: {rate: 1/m, burst: 3}\n");
  Served one = serve(config, log);
  Served two = serve(config, "/tmp/" + prefix + "-serve-two.log");
  EXPECT_EQ(burst_of(one, kReader, 6), 3);
  EXPECT_EQ(burst_of(two, kReader, 6), 3) << "the other process counts on its own";
  EXPECT_EQ(burst_of(one, kReader, 2), 0) << "and the first stays spent";
}

}  // namespace
}  // namespace bk
