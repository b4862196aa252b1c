// Outages against real servers of the test's own: a redis-server restarted (with and without
// AOF), connections killed, a frozen server, a server at maxmemory, and a connection cut
// under a tick. The consumer rides them out, probes tell the truth, nothing is counted twice.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "harness.h"
#include "hot/keys.h"
#include "lifecycle/ingest.h"
#include "prom_text.h"
#include "redis/error.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

const char* kBoards = R"(  - name: ing
    periods: [daily]
    max_points: 10000000
    hot_keep: 100000
    display: 10
    retention: {default: 3650d}
)";
const char* kNow = "--now=2027-01-04T12:00:00Z";

// A redis-server of this test's own, so it may be restarted, frozen or filled without
// disturbing the tests that share the suite's server; with AOF (appendfsync always) or
// without any persistence.
class OwnRedis : public test::RedisServer {
 public:
  explicit OwnRedis(bool aof)
      : test::RedisServer(
            aof ? std::vector<std::string>{"--appendonly", "yes", "--appendfsync", "always"}
                : std::vector<std::string>{}) {}
  // SHUTDOWN NOSAVE: with AOF on, what was acknowledged survives; without, everything goes.
  void shutdown_nosave() { stop(); }
};

// The harness config with the Redis URL replaced by `url`.
std::string write_config_for(const std::string& prefix, const std::string& url) {
  std::string text = test::config_text(prefix, kBoards);
  const std::string shared = test::redis_url();
  text.replace(text.find(shared), shared.size(), url);
  std::string path = "/tmp/bk-test-" + prefix + "-own.yaml";
  std::ofstream(path) << text;
  // The schema first, as in every deployment (a board's first update asks the cold tier).
  EXPECT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  return path;
}

std::int64_t field(const redis::Reply& info, const std::string& name) {
  for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
    if (info.at(i).as_string() == name)
      return info.at(i + 1).is_nil() ? -1 : info.at(i + 1).as_int();
  }
  return -1;
}

// True once the group has read everything and nothing is pending (retrying through
// restarts of the server).
bool caught_up(const OwnRedis& server, const std::string& stream, std::chrono::seconds within) {
  const auto until = Steady::now() + within;
  while (Steady::now() < until) {
    try {
      redis::Connection c = server.connect();
      const redis::Reply groups = c.command({"XINFO", "GROUPS", stream});
      if (!groups.is_error() && !groups.elements.empty() && field(groups.at(0), "lag") == 0 &&
          field(groups.at(0), "pending") == 0) {
        return true;
      }
    } catch (const Error&) {
      // not reachable right now
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

bool alive(int pid) {
  return waitpid(pid, nullptr, WNOHANG) == 0;
}

// Events of the model: one id each, points summed per member.
struct Model {
  std::map<std::string, std::int64_t> sums;
  int next = 0;

  // n events "<tag><k>" for members "<member_prefix>0..<members-1>".
  std::vector<redis::Args> events(const std::string& stream, const std::string& tag,
                                  const std::string& member_prefix, int n, int members) {
    std::vector<redis::Args> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k, ++next) {
      const std::string member = member_prefix + std::to_string(next % members);
      const int value = 1 + next % 7;
      sums[member] += value;
      out.push_back({"XADD", stream, "*", "board", "ing", "member", member, "value",
                     std::to_string(value), "at", "2027-01-04T10:00:00Z", "id",
                     tag + std::to_string(next)});
    }
    return out;
  }
};

void send_all(redis::Connection& c, const std::vector<redis::Args>& commands) {
  for (std::size_t at = 0; at < commands.size(); at += 500) {
    const auto end =
        commands.begin() + static_cast<std::ptrdiff_t>(std::min(commands.size(), at + 500));
    for (const auto& r : c.pipeline({commands.begin() + static_cast<std::ptrdiff_t>(at), end})) {
      r.checked();
    }
  }
}

std::map<std::string, std::int64_t> board_points(const std::string& prefix, const OwnRedis& s) {
  const Config config = parse_config(
      "redis:\n  url: " + s.url() + "\n  key_prefix: " + prefix + "\nboards:\n" + kBoards,
      "test.yaml", {});
  redis::Connection c = s.connect();
  service::Leaderboards lb(config, c, Clock(*parse_rfc3339("2027-01-04T12:00:00Z")));
  std::map<std::string, std::int64_t> out;
  for (const auto& r : lb.reads().top_at({lb.resolve("ing", "daily", std::nullopt)}, 0, 100000)) {
    out[r.member] = r.points;
  }
  return out;
}

// Waits until the group exists and has read at least one entry (ingest is busy).
void wait_until_reading(const OwnRedis& server, const std::string& stream) {
  for (int i = 0; i < 400; ++i) {
    redis::Connection c = server.connect();
    const redis::Reply groups = c.command({"XINFO", "GROUPS", stream});
    if (!groups.is_error() && !groups.elements.empty() && field(groups.at(0), "entries-read") > 0) {
      return;
    }
    std::this_thread::sleep_for(5ms);
  }
  ADD_FAILURE() << "ingest never read from " << stream;
}

// CLIENT KILL ID of every connection named `name` (CLIENT SETNAME): how many died. One that
// went away between the listing and the kill is not counted.
std::int64_t kill_clients_named(redis::Connection& c, const std::string& name) {
  std::int64_t killed = 0;
  std::istringstream list(c.command({"CLIENT", "LIST", "TYPE", "normal"}).as_string());
  for (std::string line; std::getline(list, line);) {
    if (line.find(" name=" + name + " ") == std::string::npos) continue;
    const auto at = line.find("id=") + 3;
    const redis::Reply r =
        c.command({"CLIENT", "KILL", "ID", line.substr(at, line.find(' ', at) - at)});
    if (!r.is_error()) killed += r.as_int();
  }
  return killed;
}

void restart_while_ingesting(bool aof) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(aof);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};

  Model before;  // members m*: lost with the data when there is no AOF
  redis::Connection producer = server.connect();
  send_all(producer, before.events(stream, "a", "m", 20000, 300));
  wait_until_reading(server, stream);
  server.shutdown_nosave();  // very likely in the middle of a batch
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  server.start();

  Model after;  // members n*: written after the restart, applied whatever was lost
  redis::Connection again = server.connect();
  send_all(again, after.events(stream, "b", "n", 5000, 100));
  EXPECT_TRUE(caught_up(server, stream, 60s)) << test::read_file(log);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);

  const auto points = board_points(prefix, server);
  for (const auto& [member, sum] : after.sums) EXPECT_EQ(points.at(member), sum) << member;
  if (aof) {
    // Everything acknowledged was on disk: every event counts, exactly once.
    for (const auto& [member, sum] : before.sums) EXPECT_EQ(points.at(member), sum) << member;
    EXPECT_EQ(points.size(), before.sums.size() + after.sums.size());
  }
  const std::string text = test::read_file(log);
  EXPECT_NE(text.find("retrying in"), std::string::npos) << text;
  EXPECT_NE(text.find("redis is back"), std::string::npos) << text;
}

TEST(Outage, IngestRidesOutARedisRestartWithAofAndCountsEveryEventOnce) {
  restart_while_ingesting(true);
}

TEST(Outage, IngestRidesOutARedisRestartThatLostEverythingAndAppliesLaterEvents) {
  restart_while_ingesting(false);
}

// --drain started while Redis is down waits for it, applies everything, then exits 0.
TEST(Outage, DrainingWaitsForRedisInsteadOfExiting) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(true);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  Model model;
  {
    redis::Connection c = server.connect();
    send_all(c, model.events(stream, "d", "m", 3000, 50));
  }
  server.shutdown_nosave();
  const std::string log = "/tmp/bk-outage-drain-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest", "--drain"}, log);
  const test::Reaper reaper{pid};
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  server.start();  // the events come back from the AOF
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);
}

TEST(Outage, IngestRidesOutKilledConnectionsAndCountsEveryEventOnce) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-kill-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  const std::string name = "boardkeeper:" + std::to_string(pid);

  // The producer kills from its own connection (SKIPME yes), so its writes are all certain.
  Model model;
  redis::Connection c = server.connect();
  std::int64_t killed = 0;
  // 30 rounds of events and kills, then kills alone until more than five connections died
  // (a consumer killed turn after turn backs off, so a kill may find it disconnected).
  for (int round = 0; round < 30 || (killed <= 5 && round < 130); ++round) {
    if (round < 30) send_all(c, model.events(stream, "k", "m", 1000, 200));
    std::this_thread::sleep_for(round < 30 ? 20ms : 200ms);
    if (round % 2 == 0) {
      killed += c.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).as_int();
    } else {
      killed += kill_clients_named(c, name);  // the consumer's connection, by its name
    }
  }
  EXPECT_GT(killed, 5);
  EXPECT_TRUE(caught_up(server, stream, 60s)) << test::read_file(log);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  const auto points = board_points(prefix, server);
  EXPECT_EQ(points.size(), model.sums.size());
  for (const auto& [member, sum] : model.sums) EXPECT_EQ(points.at(member), sum) << member;
}

// The consumer reads the next batch on a second connection while a batch applies. Cutting
// that connection alone, again and again, loses nothing and applies nothing twice: what it
// may have read is pending, and a pass over the pending list reads it again at once (long
// before reclaim_idle, 30 s by default, would let any consumer take it over).
TEST(Outage, CuttingTheReadAheadConnectionLosesNothingAndAppliesNothingTwice) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-read-ahead-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  const std::string name = "boardkeeper:" + std::to_string(pid) + ":read-ahead";

  // A killer cuts the connection as often as it can, so that some cuts fall after the
  // server delivered a read (its entries are pending) and before the consumer read them.
  std::atomic<bool> producing{true};
  std::atomic<std::int64_t> killed{0};
  std::thread killer([&] {
    redis::Connection k = server.connect();
    while (producing.load()) killed += kill_clients_named(k, name);
  });
  Model model;
  redis::Connection c = server.connect();
  for (int round = 0; round < 150; ++round) {
    send_all(c, model.events(stream, "r", "m", 500, 300));
    std::this_thread::sleep_for(5ms);
  }
  producing = false;
  killer.join();
  EXPECT_GT(killed.load(), 3);
  EXPECT_TRUE(caught_up(server, stream, 15s)) << test::read_file(log);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);
}

TEST(Outage, BackoffDoublesFromItsFirstDelayUpToItsCapWithJitterBelowIt) {
  const lifecycle::Backoff b{Millis{100}, Millis{10000}};
  EXPECT_EQ(b.delay(1, 1.0), Millis{100});
  EXPECT_EQ(b.delay(2, 1.0), Millis{200});
  EXPECT_EQ(b.delay(5, 1.0), Millis{1600});
  EXPECT_EQ(b.delay(8, 1.0), Millis{10000});
  EXPECT_EQ(b.delay(1000000, 1.0), Millis{10000});
  EXPECT_EQ(b.delay(1, 0.0), Millis{50});  // jitter: between half and all of it
  EXPECT_EQ(b.delay(100, 0.0), Millis{5000});
}

// --- probes ---------------------------------------------------------------------------

struct HttpAnswer {
  int status = 0;
  std::string body;
};

HttpAnswer get(int port, const std::string& path) {
  HttpAnswer out;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return out;
  }
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
  close(fd);
  const auto split = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || split == std::string::npos) return out;
  out.status = std::stoi(all.substr(9, 3));
  out.body = all.substr(split + 4);
  return out;
}

int listening_port(const std::string& log) {
  const std::string marker = "on http://127.0.0.1:";
  for (int i = 0; i < 300; ++i) {
    const std::string text = test::read_file(log);
    const auto at = text.find(marker);
    if (at != std::string::npos) return std::stoi(text.substr(at + marker.size()));
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "no listening address in " << log << ":\n" << test::read_file(log);
  return 0;
}

double metric(int port, const std::string& name, const test::prom::LabelMap& labels = {}) {
  const auto parsed = test::prom::parse(get(port, "/metrics").body);
  EXPECT_TRUE(parsed.ok()) << parsed.error;
  const auto v = parsed.exposition.value(name, labels);
  EXPECT_TRUE(v.has_value()) << name << " is missing";
  return v.value_or(-1);
}

// The first time within `within` that `path` answers `status`; nullopt if it never did.
std::optional<std::chrono::duration<double>> answers(int port, const std::string& path, int status,
                                                     std::chrono::seconds within) {
  const auto start = Steady::now();
  while (Steady::now() - start < within) {
    if (get(port, path).status == status) return Steady::now() - start;
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

const test::prom::LabelMap kRedis{{"backend", "redis"}};

TEST(Outage, ReadinessFollowsRedisStoppedFrozenAndBackWhileTheConsumerStaysAlive) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-probes-" + prefix + ".log";
  const int pid =
      test::spawn_cli({"--config", path, kNow, "ingest", "--listen", "127.0.0.1:0"}, log);
  const test::Reaper reaper{pid};
  const int port = listening_port(log);
  ASSERT_GT(port, 0);
  ASSERT_TRUE(answers(port, "/readyz", 200, 10s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 0);

  // Stopped: not ready within seconds, alive all along, the failures counted.
  server.shutdown_nosave();
  EXPECT_TRUE(answers(port, "/readyz", 503, 5s)) << test::read_file(log);
  for (int i = 0; i < 4; ++i, std::this_thread::sleep_for(1s)) {
    EXPECT_EQ(get(port, "/healthz").status, 200);
    EXPECT_EQ(get(port, "/readyz").status, 503);
  }
  EXPECT_GE(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 2);
  server.start();
  EXPECT_TRUE(answers(port, "/readyz", 200, 20s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 0);
  Model model;
  redis::Connection c = server.connect();
  send_all(c, model.events(stream, "r", "m", 50, 10));
  EXPECT_TRUE(caught_up(server, stream, 20s)) << test::read_file(log);

  // Frozen (SIGSTOP): not ready well before the 10 s command timeout gives up.
  server.freeze();
  const auto turned = answers(port, "/readyz", 503, 9s);
  EXPECT_TRUE(turned) << test::read_file(log);
  if (turned) {
    EXPECT_LT(turned->count(), 8.0);
  }
  EXPECT_EQ(get(port, "/healthz").status, 200);
  std::this_thread::sleep_for(12s);  // past the command timeout: a failure, still alive
  EXPECT_EQ(get(port, "/healthz").status, 200);
  EXPECT_EQ(get(port, "/readyz").status, 503);
  EXPECT_GE(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 1);
  server.thaw();
  EXPECT_TRUE(answers(port, "/readyz", 200, 20s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 0);
  send_all(c, model.events(stream, "r", "m", 50, 10));
  EXPECT_TRUE(caught_up(server, stream, 20s)) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);

  // SIGTERM during a backoff sleep: a prompt, clean exit.
  server.shutdown_nosave();
  std::this_thread::sleep_for(3s);
  const auto asked = Steady::now();
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_LT(std::chrono::duration<double>(Steady::now() - asked).count(), 3.0);
}

// --- dead letters at maxmemory ---------------------------------------------------------

TEST(Outage, DeadLettersRefusedAtMaxmemoryStayPendingUntilMemoryReturns) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string dead = stream + ":dead";
  redis::Connection c = server.connect();
  c.command({"XGROUP", "CREATE", stream, "boardkeeper", "0", "MKSTREAM"}).checked();
  // Bad events (malformed, unknown board), then maxmemory below what is used, in one
  // transaction: the consumer reads them when no dead letter can be written any more.
  c.command({"MULTI"}).checked();
  for (int i = 0; i < 5; ++i) {
    c.command({"XADD", stream, "*", "board", "ing", "member", "x", "value", "many"});
    c.command({"XADD", stream, "*", "board", "nope", "member", "y", "value", "1"});
  }
  c.command({"CONFIG", "SET", "maxmemory", "1"});
  const redis::Reply added = c.command({"EXEC"}).checked();
  std::set<std::string> bad;
  for (std::size_t i = 0; i < 10; ++i) bad.insert(added.at(i).as_string());

  const std::string log = "/tmp/bk-outage-oom-" + prefix + ".log";
  const int pid =
      test::spawn_cli({"--config", path, kNow, "ingest", "--listen", "127.0.0.1:0"}, log);
  const test::Reaper reaper{pid};
  const int port = listening_port(log);
  ASSERT_GT(port, 0);
  // Read, refused, and left pending: nothing acknowledged without its dead letter.
  bool read_all = false;
  for (int i = 0; i < 100 && !read_all; ++i, std::this_thread::sleep_for(100ms)) {
    const redis::Reply groups = c.command({"XINFO", "GROUPS", stream}).checked();
    read_all = field(groups.at(0), "lag") == 0;
  }
  EXPECT_TRUE(read_all);
  std::this_thread::sleep_for(1500ms);
  const redis::Reply pending = c.command({"XPENDING", stream, "boardkeeper", "-", "+", "100"});
  std::set<std::string> held;
  for (const auto& p : pending.checked().elements) held.insert(p.at(0).as_string());
  EXPECT_EQ(held, bad);
  EXPECT_EQ(c.command({"EXISTS", dead}).as_int(), 0);
  EXPECT_GE(metric(port, "boardkeeper_ingest_dead_letter_failures_total"), 10);
  const std::string text = test::read_file(log);
  EXPECT_NE(text.find(*bad.begin()), std::string::npos) << text;  // names the entry
  EXPECT_NE(text.find("OOM"), std::string::npos) << text;         // and Redis's reason

  // Memory back: the dead letters are written and the pending list drains.
  c.command({"CONFIG", "SET", "maxmemory", "0"}).checked();
  bool drained = false;
  for (int i = 0; i < 300 && !drained; ++i, std::this_thread::sleep_for(100ms)) {
    drained = c.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int() == 0;
  }
  EXPECT_TRUE(drained) << test::read_file(log);
  std::set<std::string> recorded;
  const redis::Reply letters = c.command({"XRANGE", dead, "-", "+"}).checked();
  for (const auto& e : letters.elements) {
    const auto& f = e.at(1);
    for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
      if (f.at(i).as_string() == "stream_id") recorded.insert(f.at(i + 1).as_string());
    }
  }
  EXPECT_EQ(recorded, bad);
  EXPECT_EQ(c.command({"XLEN", dead}).as_int(), 10);
  EXPECT_EQ(metric(port, "boardkeeper_ingest_events_dead_lettered_total"), 10);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
}

// --- tick ------------------------------------------------------------------------------

// A TCP proxy of the test's own in front of a server (the suite's Redis or PostgreSQL):
// it can cut the connection carrying the nth chunk that contains a needle (before passing
// it on), or refuse everyone while blocked (closing what is open).
class Proxy {
 public:
  explicit Proxy(int upstream_port) : upstream_port_(upstream_port) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    listen(listener_, 16);
    socklen_t len = sizeof a;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~Proxy() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  int port() const { return port_; }
  // Set before the first connection.
  void cut_at(std::string needle, int nth) {
    needle_ = std::move(needle);
    left_ = nth;
  }
  bool cut() const { return left_.load() <= 0; }
  void block(bool blocked) { blocked_ = blocked; }

 private:
  std::string needle_;
  std::atomic<int> left_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> blocked_{false};
  int listener_ = -1, port_ = 0, upstream_port_ = 0;
  std::thread thread_;

  void serve() {
    std::vector<std::pair<int, int>> pairs;  // client, upstream
    while (!stop_) {
      if (blocked_) {
        for (const auto& [c, u] : pairs) {
          close(c);
          close(u);
        }
        pairs.clear();
      }
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (const auto& [c, u] : pairs) {
        fds.push_back({c, POLLIN, 0});
        fds.push_back({u, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      const std::size_t polled = pairs.size();  // a pair accepted below has no pollfd yet
      if ((fds[0].revents & POLLIN) != 0) {
        const int c = accept(listener_, nullptr, nullptr);
        if (blocked_) {
          close(c);
        } else {
          const int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          sockaddr_in a{};
          a.sin_family = AF_INET;
          a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
          a.sin_port = htons(static_cast<std::uint16_t>(upstream_port_));
          if (connect(u, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
            pairs.emplace_back(c, u);
          } else {
            close(c);
            close(u);
          }
        }
      }
      std::vector<std::pair<int, int>> keep(pairs.begin() + static_cast<std::ptrdiff_t>(polled),
                                            pairs.end());
      for (std::size_t i = 0; i < polled; ++i) {
        const auto [c, u] = pairs[i];
        const bool open =
            forward(fds[1 + 2 * i], c, u, true) && forward(fds[2 + 2 * i], u, c, false);
        if (open) {
          keep.emplace_back(c, u);
        } else {
          close(c);
          close(u);
        }
      }
      pairs = std::move(keep);
    }
    for (const auto& [c, u] : pairs) {
      close(c);
      close(u);
    }
  }

  // Passes what `from` has to `to`; false when the pair is to be closed.
  bool forward(const pollfd& p, int from, int to, bool from_client) {
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) return true;
    char buf[65536];
    const ssize_t n = recv(from, buf, sizeof buf, 0);
    if (n <= 0) return false;
    if (from_client && left_.load() > 0 &&
        std::string_view(buf, static_cast<std::size_t>(n)).find(needle_) != std::string::npos &&
        --left_ == 0) {
      return false;  // cut: the command never reaches the server, the client sees the link close
    }
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t w = send(to, buf + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
      if (w <= 0) return false;
      sent += w;
    }
    return true;
  }
};

// The port of a postgresql://user@host:port/db URL.
int postgres_port(const std::string& url) {
  const auto at = url.find('@');
  const auto colon = url.find(':', at);
  return std::stoi(url.substr(colon + 1, url.find('/', colon) - colon - 1));
}

const char* kSpillBoards = R"(  - name: rh
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
)";

// PostgreSQL gone while events need rehydrations: those stay pending (the others apply),
// /readyz says so, and once it is back they are applied within seconds (the consumer
// re-reads its own pending entries; it does not wait for the 30 s reclaim).
TEST(Outage, EventsWaitingForAnUnreachableColdTierApplySoonAfterItReturns) {
  const std::string prefix = test::unique_prefix();
  const std::string shared_path = test::write_config(prefix, kSpillBoards);
  ASSERT_EQ(test::run_cli({"--config", shared_path, "migrate"}).exit_code, 0);
  const Config config = test::make_config(prefix, kSpillBoards);
  redis::Connection conn = test::connect_redis();
  {
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T11:00:00Z")));
    std::vector<service::Update> updates;
    updates.reserve(20);
    for (int i = 0; i < 20; ++i) {
      updates.push_back({"rh", "m" + std::to_string(i), 100 + i, std::nullopt, ""});
    }
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
  }
  const auto spilled = test::run_cli({"--config", shared_path, kNow, "tick"});
  ASSERT_EQ(spilled.exit_code, 0) << spilled.err;

  Proxy proxy(postgres_port(test::postgres_url()));
  proxy.block(true);
  const std::string path = "/tmp/bk-test-" + prefix + "-pgproxy.yaml";
  std::string pg = test::postgres_url();
  pg.replace(pg.find(std::to_string(postgres_port(pg))), std::to_string(postgres_port(pg)).size(),
             std::to_string(proxy.port()));
  std::ofstream(path) << test::config_text(prefix, kSpillBoards, pg);
  const std::string log = "/tmp/bk-outage-pg-" + prefix + ".log";
  const int pid =
      test::spawn_cli({"--config", path, kNow, "ingest", "--listen", "127.0.0.1:0"}, log);
  const test::Reaper reaper{pid};
  const int port = listening_port(log);
  ASSERT_GT(port, 0);
  const std::string stream = prefix + ":events";
  std::vector<redis::Args> events;
  events.reserve(6);
  for (int i = 0; i < 5; ++i) {  // m0..m4 were spilled: each needs its cold row
    events.push_back({"XADD", stream, "*", "board", "rh", "member", "m" + std::to_string(i),
                      "value", "1", "at", "2027-01-04T11:30:00Z", "id", "c" + std::to_string(i)});
  }
  events.push_back({"XADD", stream, "*", "board", "rh", "member", "m19", "value", "1", "at",
                    "2027-01-04T11:30:00Z", "id", "h19"});  // hot: applies at once
  for (const auto& r : conn.pipeline(events)) r.checked();

  const test::prom::LabelMap postgres{{"backend", "postgres"}};
  double applied = 0;
  for (int i = 0; i < 100 && applied < 1; ++i, std::this_thread::sleep_for(100ms)) {
    applied = metric(port, "boardkeeper_ingest_events_applied_total");
  }
  EXPECT_EQ(applied, 1);
  EXPECT_TRUE(answers(port, "/readyz", 503, 5s)) << test::read_file(log);
  EXPECT_EQ(get(port, "/healthz").status, 200);
  EXPECT_GE(metric(port, "boardkeeper_backend_consecutive_failures", postgres), 1);
  std::this_thread::sleep_for(2s);  // retried meanwhile, still unreachable
  EXPECT_EQ(conn.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int(), 5);
  EXPECT_EQ(get(port, "/readyz").status, 503);

  proxy.block(false);
  bool drained = false;
  const auto back = Steady::now();
  while (!drained && Steady::now() - back < 15s) {
    drained = conn.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int() == 0;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(drained) << test::read_file(log);
  EXPECT_TRUE(answers(port, "/readyz", 200, 5s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", postgres), 0);
  EXPECT_EQ(metric(port, "boardkeeper_ingest_events_applied_total"), 6);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);

  cold::ColdStore cold(test::postgres_url(), prefix);
  service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T12:00:00Z")), &cold);
  const auto ref = lb.resolve("rh", "daily", std::nullopt);
  for (int i = 0; i < 5; ++i) {  // cold points and the new one, once
    const auto r = lb.reads().member({ref}, "m" + std::to_string(i));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->points, 100 + i + 1);
  }
  EXPECT_EQ(lb.reads().member({ref}, "m19")->points, 120);
}

// A board "tk" that keeps ten members hot (dates in 2027, a ten-year retention).
const char* kTenHot = R"(  - name: tk
    periods: [daily]
    max_points: 1000000
    hot_keep: 10
    display: 5
    retention: {default: 3650d}
)";

// A Redis connection cut while a board is synced from the cold tier is a Redis failure (the
// caller reconnects and sends again), never "PostgreSQL is unreachable": reported that way,
// ingest kept retrying on the dead connection without reconnecting.
TEST(Outage, ARedisCutWhileSyncingABoardIsARedisFailureNotAColdTierOne) {
  const std::string prefix = test::unique_prefix();
  const char* boards = kTenHot;
  ASSERT_EQ(test::run_cli({"--config", test::write_config(prefix, boards), "migrate"}).exit_code,
            0);
  const Config config = test::make_config(prefix, boards);
  // The first SADD registers the new board; the second, after the update script answered
  // that the board needs its sync, registers it again and is cut.
  redis::Options options = redis::parse_url(test::redis_url());
  Proxy proxy(options.port);
  proxy.cut_at("$4\r\nSADD\r\n", 2);  // the command, not a script's text
  options.port = proxy.port();
  redis::Connection conn(options);
  cold::ColdStore cold(test::postgres_url(), prefix);
  service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T11:00:00Z")), &cold);
  const std::vector<service::Update> updates{{"tk", "m1", 5, std::nullopt, ""}};
  EXPECT_THROW(lb.apply(updates), redis::ConnectionError);
  EXPECT_TRUE(proxy.cut());
}

// ingest checks on first use of PostgreSQL that the schema belongs to its deployment (a
// Redis GET of <prefix>:deployment). That check's connection cut once: ingest reconnects and
// applies everything. It used a second connection that nothing reconnected, so every later
// rehydration failed as "PostgreSQL is unreachable" until the process was restarted.
TEST(Outage, IngestRidesOutACutWhileCheckingItsDeployment) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string direct = write_config_for(prefix, server.url());
  Proxy proxy(server.port());
  proxy.cut_at(prefix + ":deployment", 1);
  std::string text = test::read_file(direct);
  text.replace(text.find(server.url()), server.url().size(),
               "redis://127.0.0.1:" + std::to_string(proxy.port()) + "/0");
  const std::string path = "/tmp/bk-test-" + prefix + "-cut-deployment.yaml";
  std::ofstream(path) << text;

  const std::string stream = prefix + ":events";
  Model model;
  {
    redis::Connection c = server.connect();
    send_all(c, model.events(stream, "c", "m", 200, 20));
  }
  const std::string log = "/tmp/bk-outage-cut-deployment-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  EXPECT_TRUE(caught_up(server, stream, 20s)) << test::read_file(log);
  EXPECT_TRUE(proxy.cut());
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);
}

TEST(Outage, TickRetriesABoardOnceAfterItsRedisConnectionIsCut) {
  const std::string prefix = test::unique_prefix();
  const char* boards = kTenHot;
  const std::string shared_path = test::write_config(prefix, boards);
  ASSERT_EQ(test::run_cli({"--config", shared_path, "migrate"}).exit_code, 0);
  const Config config = test::make_config(prefix, boards);
  redis::Connection conn = test::connect_redis();
  {
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T11:00:00Z")));
    std::vector<service::Update> updates;
    updates.reserve(100);
    for (int i = 0; i < 100; ++i) {
      updates.push_back({"tk", "m" + std::to_string(i), 100 + i, std::nullopt, ""});
    }
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
  }
  // The spill runs in chunks of 20 members; the connection is cut at its fourth script call,
  // after cold rows were committed and before all of them left Redis.
  const redis::Options shared_options = redis::parse_url(test::redis_url());
  Proxy proxy(shared_options.port);
  proxy.cut_at("EVALSHA", 4);
  std::string text = test::config_text(prefix, boards);
  const std::string shared = test::redis_url();
  text.replace(text.find(shared), shared.size(),
               "redis://127.0.0.1:" + std::to_string(proxy.port()) + "/" +
                   std::to_string(shared_options.db));
  const std::string path = "/tmp/bk-test-" + prefix + "-proxy.yaml";
  std::ofstream(path) << text;

  const auto r =
      test::run_cli({"--config", path, "--now=2027-01-04T12:00:00Z", "tick", "--chunk", "20"});
  EXPECT_TRUE(proxy.cut());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("retrying"), std::string::npos) << r.err;

  // Every member once, with its points; 10 hot, the rest cold.
  cold::ColdStore cold(test::postgres_url(), prefix);
  service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T12:00:00Z")), &cold);
  const auto rows = lb.reads().top_at({lb.resolve("tk", "daily", std::nullopt)}, 0, 1000);
  ASSERT_EQ(rows.size(), 100U);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].points, 199 - static_cast<std::int64_t>(i)) << rows[i].member;
  }
  EXPECT_EQ(
      conn.command({"ZCARD", hot::BoardKeys(prefix, "tk").live("daily", "2027-01-04")}).as_int(),
      10);
}

}  // namespace
}  // namespace bk
