// Bounded streams against a real Redis: what every consumer group has acknowledged is trimmed
// (and nothing another group still needs), the dead-letter stream is capped, a consumer that
// stops cleanly leaves its group unless entries are pending at it, the `ingest:` config
// section is used and the command line overrides it, and several streams are consumed at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "harness.h"
#include "hot/stream.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;

const char* kBoards = R"(  - name: ing
    periods: [daily]
    max_points: 10000000
    hot_keep: 100000
    display: 10
    retention: {default: 3650d}
)";
const char* kNow = "--now=2027-01-04T12:00:00Z";

// A test's own prefix, config (the harness's plus `ingest_yaml`, a top-level section in
// which PREFIX stands for the prefix) and schema, migrated.
struct Env {
  std::string prefix = test::unique_prefix();
  std::string stream = prefix + ":events";
  std::string path;
  redis::Connection conn = test::connect_redis();

  explicit Env(std::string ingest_yaml = "") {
    for (auto at = ingest_yaml.find("PREFIX"); at != std::string::npos;
         at = ingest_yaml.find("PREFIX", at)) {
      ingest_yaml.replace(at, 6, prefix);
    }
    path = test::write_text_config(prefix, test::config_text(prefix, kBoards) + ingest_yaml);
    EXPECT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  }

  // `n` valid events of member m<k % 10>, value 1 each; their stream ids.
  std::vector<std::string> add_events(const std::string& key, int n) {
    std::vector<redis::Args> adds;
    for (int k = 0; k < n; ++k) {
      adds.push_back({"XADD", key, "*", "board", "ing", "member", "m" + std::to_string(k % 10),
                      "value", "1", "at", "2027-01-04T10:00:00Z"});
    }
    std::vector<std::string> ids;
    for (const auto& r : conn.pipeline(adds)) ids.push_back(r.checked().as_string());
    return ids;
  }

  test::RunResult drain(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"--config", path, kNow, "ingest", "--drain"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args, {}, 60s);
  }

  std::int64_t xlen(const std::string& key) { return conn.command({"XLEN", key}).as_int(); }

  std::vector<std::string> ids_in(const std::string& key) {
    std::vector<std::string> out;
    const redis::Reply r = conn.command({"XRANGE", key, "-", "+"}).checked();
    for (const auto& e : r.elements) {
      out.push_back(e.at(0).as_string());
    }
    return out;
  }

  // Name -> pending count of the group's consumers.
  std::map<std::string, std::int64_t> consumers(const std::string& key, const std::string& group) {
    std::map<std::string, std::int64_t> out;
    const redis::Reply r = conn.command({"XINFO", "CONSUMERS", key, group}).checked();
    for (const auto& c : r.elements) {
      std::string name;
      std::int64_t pending = -1;
      for (std::size_t i = 0; i + 1 < c.elements.size(); i += 2) {
        if (c.at(i).as_string() == "name") name = c.at(i + 1).as_string();
        if (c.at(i).as_string() == "pending") pending = c.at(i + 1).as_int();
      }
      out[name] = pending;
    }
    return out;
  }

  std::set<std::string> groups(const std::string& key) {
    std::set<std::string> out;
    const redis::Reply r = conn.command({"XINFO", "GROUPS", key});
    if (r.is_error()) return out;
    for (const auto& g : r.elements) out.insert(g.at(1).as_string());
    return out;
  }

  std::int64_t pending(const std::string& key, const std::string& group = "boardkeeper") {
    const redis::Reply r = conn.command({"XPENDING", key, group});
    return r.is_error() ? -1 : r.at(0).as_int();
  }

  std::map<std::string, std::int64_t> points() {
    return test::points_of(conn, test::make_config(prefix, kBoards), "ing", "daily",
                           *parse_rfc3339("2027-01-04T12:00:00Z"));
  }
};

template <typename F>
bool eventually(F&& done, std::chrono::milliseconds within = 20s) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

// --- trimming ----------------------------------------------------------------------------

TEST(StreamBounds, ADrainWithTrimOnLeavesNothingAcknowledgedInTheStream) {
  Env s;
  s.add_events(s.stream, 500);
  s.conn.command({"XADD", s.stream, "*", "board", "ing", "member", "x", "value", "many"}).checked();
  const auto r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.pending(s.stream), 0);
  EXPECT_EQ(s.xlen(s.stream), 0);
  EXPECT_EQ(s.xlen(s.stream + ":dead"), 1);
  EXPECT_EQ(s.points().at("m3"), 50);
}

// Only what the group acknowledged goes: the entries a dead letter could not be written for
// stay pending, and so in the stream, from the first of them on.
TEST(StreamBounds, TrimmingStopsAtTheFirstEntryPendingInTheGroup) {
  Env s;
  const std::string dead = s.stream + ":dead";
  s.conn.command({"SET", dead, "not a stream"}).checked();
  const auto before = s.add_events(s.stream, 20);
  const std::string bad =
      s.conn.command({"XADD", s.stream, "*", "board", "ing", "member", "x", "value", "many"})
          .as_string();
  const auto after = s.add_events(s.stream, 20);
  const std::string log = "/tmp/bk-bounds-pending-" + s.prefix + ".log";
  const int pid = test::spawn_cli({"--config", s.path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  EXPECT_TRUE(eventually([&] {
    return s.ids_in(s.stream).front() == bad && s.xlen(s.stream) == 21;
  })) << s.xlen(s.stream)
      << "\n"
      << test::read_file(log);
  EXPECT_EQ(s.pending(s.stream), 1);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(s.ids_in(s.stream).front(), bad);
}

// Another application's consumer group on the same stream: what it has not read, and what
// is pending at it, stays; it can still read and claim all of it.
TEST(StreamBounds, TrimmingNeverDropsAnEntryAnotherGroupHasNotAcknowledged) {
  Env s;
  const auto first = s.add_events(s.stream, 10);
  s.conn.command({"XGROUP", "CREATE", s.stream, "other", "0"}).checked();
  auto r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.pending(s.stream), 0);
  EXPECT_EQ(s.ids_in(s.stream), first);  // the other group has read nothing

  // It reads six, acknowledges three of them (the first, second and fourth).
  const redis::Reply read =
      s.conn.command({"XREADGROUP", "GROUP", "other", "o1", "COUNT", "6", "STREAMS", s.stream, ">"})
          .checked();
  ASSERT_EQ(read.at(0).at(1).elements.size(), 6U);
  s.conn.command({"XACK", s.stream, "other", first[0], first[1], first[3]}).checked();
  const auto more = s.add_events(s.stream, 5);
  r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Everything before its first pending entry (first[2]) is acknowledged by both groups.
  std::vector<std::string> kept(first.begin() + 2, first.end());
  kept.insert(kept.end(), more.begin(), more.end());
  EXPECT_EQ(s.ids_in(s.stream), kept);
  // Its pending entries can be claimed with their contents, the rest read.
  const redis::Reply claimed =
      s.conn.command({"XAUTOCLAIM", s.stream, "other", "o2", "0", "0-0", "COUNT", "100"}).checked();
  std::vector<std::string> claimed_ids;
  for (const auto& e : claimed.at(1).elements) {
    EXPECT_FALSE(e.at(1).is_nil());
    EXPECT_EQ(e.at(1).at(0).as_string(), "board");
    claimed_ids.push_back(e.at(0).as_string());
  }
  EXPECT_EQ(claimed_ids, (std::vector<std::string>{first[2], first[4], first[5]}));
  const redis::Reply rest =
      s.conn.command({"XREADGROUP", "GROUP", "other", "o2", "STREAMS", s.stream, ">"}).checked();
  EXPECT_EQ(rest.at(0).at(1).elements.size(), 4U + 5U);
  EXPECT_EQ(s.points().at("m0"), 2);  // 15 events of m0..m9: each counted once
}

TEST(StreamBounds, TrimFalseLeavesTheStreamAlone) {
  Env s("ingest:\n  trim: false\n");
  const auto ids = s.add_events(s.stream, 50);
  const auto r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.pending(s.stream), 0);
  EXPECT_EQ(s.ids_in(s.stream), ids);
}

TEST(StreamBounds, TheDeadLetterStreamStaysNearDeadMaxlen) {
  Env s("ingest:\n  dead_maxlen: 100\n");
  std::vector<redis::Args> bad;
  for (int i = 0; i < 2000; ++i) {
    bad.push_back({"XADD", s.stream, "*", "board", "ing", "member", "x" + std::to_string(i),
                   "value", "many"});
  }
  std::string last;
  for (const auto& r : s.conn.pipeline(bad)) last = r.checked().as_string();
  const auto r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::int64_t n = s.xlen(s.stream + ":dead");
  EXPECT_GE(n, 100);
  EXPECT_LT(n, 300);  // `MAXLEN ~` drops whole nodes (100 entries each by default)
  // The newest dead letter is kept.
  const redis::Reply newest =
      s.conn.command({"XREVRANGE", s.stream + ":dead", "+", "-", "COUNT", "1"}).checked();
  const auto& f = newest.at(0).at(1);
  EXPECT_EQ(f.at(3).as_string(), last);  // reason, stream_id, ...
}

// A dead letter and its entry's acknowledgement go in one script: both, or (refused) neither.
TEST(StreamBounds, ADeadLetterIsWrittenAndItsEntryAcknowledgedTogetherOrNotAtAll) {
  Env s;
  const auto ids = s.add_events(s.stream, 3);
  s.conn.command({"XGROUP", "CREATE", s.stream, "g", "0"}).checked();
  s.conn.command({"XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", s.stream, ">"})
      .checked();
  const std::vector<std::pair<std::string, std::string>> fields{{"board", "ing"}, {"member", "m0"}};
  hot::StreamKeeper keeper;
  const std::string dead = s.stream + ":dead";
  const auto errors = keeper.dead_letter(s.conn, {s.stream, "g"}, dead, 1000,
                                         {{ids[0], "why not", &fields}, {ids[1], "nor", nullptr}});
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  const redis::Reply letters = s.conn.command({"XRANGE", dead, "-", "+"}).checked();
  ASSERT_EQ(letters.elements.size(), 2U);
  const redis::Reply& first = letters.at(0).at(1);
  ASSERT_EQ(first.elements.size(), 8U);
  EXPECT_EQ(first.at(1).as_string(), "why not");
  EXPECT_EQ(first.at(3).as_string(), ids[0]);
  EXPECT_EQ(first.at(7).as_string(), "m0");
  EXPECT_EQ(letters.at(1).at(1).elements.size(), 4U);
  // Only the third entry is still pending.
  const redis::Reply pending =
      s.conn.command({"XPENDING", s.stream, "g", "-", "+", "10"}).checked();
  ASSERT_EQ(pending.elements.size(), 1U);
  EXPECT_EQ(pending.at(0).at(0).as_string(), ids[2]);

  // A dead-letter key of the wrong type refuses the letter: nothing written, still pending.
  const std::string wrong = s.prefix + ":not-a-stream";
  s.conn.command({"SET", wrong, "x"}).checked();
  const auto refused =
      keeper.dead_letter(s.conn, {s.stream, "g"}, wrong, 1000, {{ids[2], "no room", nullptr}});
  ASSERT_EQ(refused.size(), 1U);
  EXPECT_NE(refused[0].find("WRONGTYPE"), std::string::npos) << refused[0];
  EXPECT_EQ(s.conn.command({"XPENDING", s.stream, "g"}).checked().at(0).as_int(), 1);
}

// Two consumers may both decide to dead-letter one entry (one took it over from the other,
// which had not finished): the entry gets one dead letter. The second finds it acknowledged
// and writes nothing (kAlreadyAcknowledged), so it does not count it either.
TEST(StreamBounds, AnEntryDeadLetteredByTwoConsumersHasOneDeadLetter) {
  Env s;
  const auto ids = s.add_events(s.stream, 1);
  s.conn.command({"XGROUP", "CREATE", s.stream, "g", "0"}).checked();
  s.conn.command({"XREADGROUP", "GROUP", "g", "c1", "COUNT", "10", "STREAMS", s.stream, ">"})
      .checked();
  s.conn.command({"XCLAIM", s.stream, "g", "c2", "0", ids[0]}).checked();
  hot::StreamKeeper keeper;
  const std::string dead = s.stream + ":dead";
  EXPECT_EQ(keeper.dead_letter(s.conn, {s.stream, "g"}, dead, 1000, {{ids[0], "bad", nullptr}}),
            std::vector<std::string>{""});
  EXPECT_EQ(keeper.dead_letter(s.conn, {s.stream, "g"}, dead, 1000, {{ids[0], "bad", nullptr}}),
            std::vector<std::string>{hot::kAlreadyAcknowledged});
  EXPECT_EQ(s.conn.command({"XLEN", dead}).checked().as_int(), 1);
}

// --- leaving the group -------------------------------------------------------------------

TEST(StreamBounds, AConsumerThatDrainedLeavesItsGroup) {
  Env s;
  s.add_events(s.stream, 30);
  const auto r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.groups(s.stream), (std::set<std::string>{"boardkeeper"}));
  EXPECT_TRUE(s.consumers(s.stream, "boardkeeper").empty());
}

TEST(StreamBounds, AConsumerStoppedBySigtermLeavesItsGroup) {
  Env s;
  const std::string log = "/tmp/bk-bounds-term-" + s.prefix + ".log";
  const int pid = test::spawn_cli({"--config", s.path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  s.add_events(s.stream, 30);
  EXPECT_TRUE(eventually([&] { return s.points().count("m9") == 1 && s.pending(s.stream) == 0; }));
  EXPECT_EQ(s.consumers(s.stream, "boardkeeper").size(), 1U);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_TRUE(s.consumers(s.stream, "boardkeeper").empty()) << test::read_file(log);
}

// Deleting a consumer drops its pending entries: one that has some stays, and they are
// taken over later.
TEST(StreamBounds, AConsumerWithPendingEntriesStaysInItsGroup) {
  Env s;
  const std::string dead = s.stream + ":dead";
  s.conn.command({"SET", dead, "not a stream"}).checked();  // its dead letter fails
  s.add_events(s.stream, 5);
  const std::string bad =
      s.conn.command({"XADD", s.stream, "*", "board", "ing", "member", "x", "value", "many"})
          .as_string();
  const std::string log = "/tmp/bk-bounds-keep-" + s.prefix + ".log";
  const int pid = test::spawn_cli({"--config", s.path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  EXPECT_TRUE(eventually([&] { return s.points().count("m4") == 1 && s.pending(s.stream) == 1; }));
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  const auto consumers = s.consumers(s.stream, "boardkeeper");
  ASSERT_EQ(consumers.size(), 1U) << test::read_file(log);
  EXPECT_EQ(consumers.begin()->second, 1);
  EXPECT_EQ(s.ids_in(s.stream), std::vector<std::string>{bad});

  // Repaired: a later consumer takes the entry over, dead-letters it, and leaves.
  s.conn.command({"DEL", dead}).checked();
  const auto r = s.drain({"--reclaim-idle-ms", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.pending(s.stream), 0);
  EXPECT_EQ(s.xlen(dead), 1);
  EXPECT_EQ(s.xlen(s.stream), 0);
  const auto left = s.consumers(s.stream, "boardkeeper");
  EXPECT_EQ(left.size(), 1U);  // the first one's name, with nothing pending any more
  EXPECT_EQ(left.begin()->second, 0);
}

// --- config and command line -------------------------------------------------------------

TEST(StreamBounds, TheIngestSectionIsUsedAndFlagsOverrideIt) {
  Env s("ingest:\n  stream: PREFIX:cfg\n  group: cfggroup\n  reclaim_idle: 200ms\n");
  const std::string cfg = s.prefix + ":cfg";
  const std::string flag = s.prefix + ":flag";

  // An entry left pending by a consumer that is gone: reclaim_idle (200 ms) lets the drain
  // take it over at once (the default, 30 s, would outlast the run's limit below).
  s.conn.command({"XGROUP", "CREATE", cfg, "cfggroup", "0", "MKSTREAM"}).checked();
  s.add_events(cfg, 10);
  s.conn.command({"XREADGROUP", "GROUP", "cfggroup", "gone", "COUNT", "1", "STREAMS", cfg, ">"})
      .checked();
  std::this_thread::sleep_for(300ms);
  auto r = test::run_cli({"--config", s.path, kNow, "ingest", "--drain"}, {}, 20s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.groups(cfg), (std::set<std::string>{"cfggroup"}));
  EXPECT_EQ(s.pending(cfg, "cfggroup"), 0);
  EXPECT_EQ(s.points().at("m0"), 1);
  EXPECT_EQ(s.groups(s.stream), std::set<std::string>{});  // the default stream is not read

  // The flags win over the section.
  s.add_events(flag, 10);
  r = s.drain({"--stream", flag, "--group", "flaggroup"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.groups(flag), (std::set<std::string>{"flaggroup"}));
  EXPECT_EQ(s.pending(flag, "flaggroup"), 0);
  EXPECT_EQ(s.points().at("m0"), 2);
}

TEST(StreamBounds, TheStreamFlagMayBeRepeated) {
  Env s;
  const std::string a = s.prefix + ":a";
  const std::string b = s.prefix + ":b";
  s.add_events(a, 10);
  s.add_events(b, 10);
  auto r = s.drain({"--stream", a, "--stream", b});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.points().at("m0"), 2);
  for (const std::string& key : {a, b}) {
    EXPECT_EQ(s.groups(key), (std::set<std::string>{"boardkeeper"})) << key;
    EXPECT_EQ(s.xlen(key), 0) << key;
  }
  r = s.drain({"--stream", a, "--stream", a});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--stream: stream '" + a + "' is listed twice"), std::string::npos) << r.err;
  r = s.drain({"--stream", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("must not be empty"), std::string::npos) << r.err;
}

TEST(StreamBounds, BadIngestSectionsAreConfigErrors) {
  Env s;
  std::ofstream(s.path) << test::config_text(s.prefix, kBoards) << "ingest:\n  dead_maxlen: 0\n";
  const auto r = test::run_cli({"--config", s.path, "check-config"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dead_maxlen"), std::string::npos) << r.err;
}

// --- several streams ---------------------------------------------------------------------

// Each stream is read in the group, its dead letters go to its own dead-letter stream, it is
// trimmed and left on its own; equal entry ids in two streams are two events.
TEST(StreamBounds, SeveralStreamsAreConsumedTogether) {
  Env s("ingest:\n  stream: [PREFIX:a, PREFIX:b]\n");
  const std::string a = s.prefix + ":a";
  const std::string b = s.prefix + ":b";
  for (const auto& [key, value] : {std::pair{a, "1"}, std::pair{b, "10"}}) {
    for (const char* id : {"1-1", "1-2", "2-0"}) {
      s.conn
          .command({"XADD", key, id, "board", "ing", "member", "same", "value", value, "at",
                    "2027-01-04T10:00:00Z"})
          .checked();
    }
    s.conn.command({"XADD", key, "3-0", "board", "ing", "member", "x", "value", "bad"}).checked();
  }
  s.add_events(a, 20);
  s.add_events(b, 30);
  const auto r = s.drain();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto points = s.points();
  EXPECT_EQ(points.at("same"), 33);
  EXPECT_EQ(points.at("m0"), 5);
  for (const std::string& key : {a, b}) {
    EXPECT_EQ(s.pending(key), 0) << key;
    EXPECT_EQ(s.xlen(key), 0) << key;
    EXPECT_EQ(s.xlen(key + ":dead"), 1) << key;
    EXPECT_TRUE(s.consumers(key, "boardkeeper").empty()) << key;
  }
  EXPECT_EQ(s.conn.command({"EXISTS", s.stream}).as_int(), 0);
}

// Entries left pending in one stream of several (their dead letters fail) are read again by
// the consumer's own passes while the other streams go on (reclaim_idle is too long for it
// to take them over from itself); entries a consumer that is gone left pending in another
// stream are taken over by a later run.
TEST(StreamBounds, PendingEntriesOfSeveralStreamsAreRetriedAndTakenOverPerStream) {
  Env s("ingest:\n  stream: [PREFIX:a, PREFIX:b, PREFIX:c]\n  reclaim_idle: 10m\n");
  const std::string a = s.prefix + ":a";
  const std::string b = s.prefix + ":b";
  const std::string c = s.prefix + ":c";
  s.conn.command({"SET", b + ":dead", "not a stream"}).checked();
  s.conn.command({"XGROUP", "CREATE", c, "boardkeeper", "0", "MKSTREAM"}).checked();
  s.add_events(c, 10);
  s.conn.command({"XREADGROUP", "GROUP", "boardkeeper", "gone", "COUNT", "4", "STREAMS", c, ">"})
      .checked();
  for (const std::string& key : {a, b}) {
    s.add_events(key, 10);
    s.conn.command({"XADD", key, "*", "board", "ing", "member", "x", "value", "bad"}).checked();
    s.add_events(key, 10);
  }
  const std::string log = "/tmp/bk-bounds-several-" + s.prefix + ".log";
  const int pid = test::spawn_cli({"--config", s.path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  EXPECT_TRUE(eventually([&] {
    return s.pending(a) == 0 && s.pending(b) == 1 && s.pending(c) == 4 && s.xlen(a) == 0 &&
           s.xlen(b) == 11 && s.xlen(c) == 10;
  })) << test::read_file(log);
  EXPECT_EQ(s.points().at("m0"), 4);  // twice in a and b; c's first entry waits at "gone"
  const std::string retried = test::read_file(log);
  EXPECT_NE(retried.find("WRONGTYPE"), std::string::npos) << retried;
  s.conn.command({"DEL", b + ":dead"}).checked();
  EXPECT_TRUE(eventually([&] { return s.pending(b) == 0 && s.xlen(b) == 0; }))
      << test::read_file(log);
  EXPECT_EQ(s.xlen(a + ":dead"), 1);
  EXPECT_EQ(s.xlen(b + ":dead"), 1);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(s.consumers(c, "boardkeeper"), (std::map<std::string, std::int64_t>{{"gone", 4}}));

  const auto r = s.drain({"--reclaim-idle-ms", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.pending(c), 0);
  EXPECT_EQ(s.xlen(c), 0);
  EXPECT_EQ(s.points().at("m0"), 5);
  EXPECT_EQ(s.consumers(c, "boardkeeper"), (std::map<std::string, std::int64_t>{{"gone", 0}}));
  for (const std::string& key : {a, b}) EXPECT_TRUE(s.consumers(key, "boardkeeper").empty());
}

}  // namespace
}  // namespace bk
