// Connections cut under the consumer and the tick by a TCP proxy of the test's own: an
// unreachable cold tier, a Redis cut while syncing a board or checking the deployment, a
// tick's connection cut; each is the failure it is and nothing is lost or counted twice.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "outage_fixture.h"

namespace bk {
namespace {

using namespace outage_test;  // NOLINT(google-build-using-namespace): the suite's fixture
using namespace std::chrono_literals;

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

// m0..m19 on board rh with 100..119 points.
void add_twenty_members(const Config& config, redis::Connection& conn) {
  service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T11:00:00Z")));
  std::vector<service::Update> updates;
  updates.reserve(20);
  for (int i = 0; i < 20; ++i) {
    updates.push_back({"rh", "m" + std::to_string(i), 100 + i, std::nullopt, ""});
  }
  for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
}

// The suite's PostgreSQL URL with `proxy`'s port in place of the server's.
std::string postgres_through(const Proxy& proxy) {
  std::string pg = test::postgres_url();
  pg.replace(pg.find(std::to_string(postgres_port(pg))), std::to_string(postgres_port(pg)).size(),
             std::to_string(proxy.port()));
  return pg;
}

// One point for each of m0..m4 (spilled: each needs its cold row) and for m19 (hot: applies
// at once).
void add_cold_and_hot_events(redis::Connection& conn, const std::string& stream) {
  std::vector<redis::Args> events;
  events.reserve(6);
  for (int i = 0; i < 5; ++i) {  // m0..m4 were spilled: each needs its cold row
    events.push_back({"XADD", stream, "*", "board", "rh", "member", "m" + std::to_string(i),
                      "value", "1", "at", "2027-01-04T11:30:00Z", "id", "c" + std::to_string(i)});
  }
  events.push_back({"XADD", stream, "*", "board", "rh", "member", "m19", "value", "1", "at",
                    "2027-01-04T11:30:00Z", "id", "h19"});  // hot: applies at once
  for (const auto& r : conn.pipeline(events)) r.checked();
}

// Cold points and the new one, once.
void expect_each_event_applied_once(const Config& config, redis::Connection& conn,
                                    const std::string& prefix) {
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

// PostgreSQL gone while events need rehydrations: those stay pending (the others apply),
// /readyz says so, and once it is back they are applied within seconds (the consumer
// re-reads its own pending entries; it does not wait for the 30 s reclaim).
TEST(Outage, EventsWaitingForAnUnreachableColdTierApplySoonAfterItReturns) {
  const std::string prefix = test::unique_prefix();
  const std::string shared_path = test::write_config(prefix, kSpillBoards);
  ASSERT_EQ(test::run_cli({"--config", shared_path, "migrate"}).exit_code, 0);
  const Config config = test::make_config(prefix, kSpillBoards);
  redis::Connection conn = test::connect_redis();
  ASSERT_NO_FATAL_FAILURE(add_twenty_members(config, conn));
  const auto spilled = test::run_cli({"--config", shared_path, kNow, "tick"});
  ASSERT_EQ(spilled.exit_code, 0) << spilled.err;

  Proxy proxy(postgres_port(test::postgres_url()));
  proxy.block(true);
  const std::string path = "/tmp/bk-test-" + prefix + "-pgproxy.yaml";
  std::ofstream(path) << test::config_text(prefix, kSpillBoards, postgres_through(proxy));
  const std::string log = "/tmp/bk-outage-pg-" + prefix + ".log";
  const int pid =
      test::spawn_cli({"--config", path, kNow, "ingest", "--listen", "127.0.0.1:0"}, log);
  const test::Reaper reaper{pid};
  const int port = listening_port(log);
  ASSERT_GT(port, 0);
  const std::string stream = prefix + ":events";
  add_cold_and_hot_events(conn, stream);

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
  expect_each_event_applied_once(config, conn, prefix);
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
