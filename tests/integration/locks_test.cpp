// A dead tick's claim: a tick whose host or network vanishes mid-archive or mid-spill never
// says goodbye to PostgreSQL (no FIN), so its period lock lives as long as the server
// believes the connection does. The next tick must get the period within a minute, and
// the ticks that skip it meanwhile show a growing busy streak.
//
// Why a plain SIGKILL on loopback does not show it: the kernel closes the killed process's
// sockets, and the server ends the session (and its locks) as soon as it has read what was
// already sent, within a second. The vanished host is reproduced with a TCP proxy of the
// test's own that, when cut, drops unanswered every packet PostgreSQL sends it (a socket
// filter): no FIN, no RST, no ACK, as when a host is unplugged.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/keys.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using Clock_ = std::chrono::steady_clock;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// A TCP proxy on a loopback port of its own to 127.0.0.1:upstream_port, forwarding both ways
// on one thread (non-blocking, a buffer per direction). cut() makes it vanish for the
// upstream without a word.
class VanishingProxy {
 public:
  explicit VanishingProxy(int upstream_port) : upstream_port_(upstream_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    EXPECT_EQ(pipe2(wake_, O_CLOEXEC), 0);
    thread_ = std::thread([this] { run(); });
  }
  ~VanishingProxy() {
    stop();
    for (Pair& p : pairs_) {
      if (p.down >= 0) close(p.down);
      close(p.up);
    }
    close(listen_fd_);
    close(wake_[0]);
    close(wake_[1]);
  }
  VanishingProxy(const VanishingProxy&) = delete;
  VanishingProxy& operator=(const VanishingProxy&) = delete;

  int port() const { return port_; }

  // Stops forwarding; once the upstream has acknowledged what it was sent, every packet it
  // sends from then on is dropped before TCP sees it (a BPF socket filter that accepts
  // nothing), so it is never answered. The client side is closed normally.
  void cut() {
    stop();
    for (Pair& p : pairs_) {
      for (int i = 0; i < 200; ++i) {
        int unacknowledged = 0;
        if (ioctl(p.up, SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      sock_filter drop_all{static_cast<std::uint16_t>(BPF_RET | BPF_K), 0, 0, 0};
      sock_fprog program{1, &drop_all};
      EXPECT_EQ(setsockopt(p.up, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program), 0);
      close(p.down);
      p.down = -1;
    }
  }

 private:
  struct Pair {
    int down = -1, up = -1;
    std::string to_up, to_down;  // read, not yet written
  };

  void stop() {
    if (!thread_.joinable()) return;
    const char c = 'x';
    EXPECT_EQ(write(wake_[1], &c, 1), 1);
    thread_.join();
  }

  int connect_upstream() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(upstream_port_));
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  // Moves what `from` has into `pending`, and `pending` into `to`; false on EOF or error.
  static bool pump(int from, short from_events, std::string& pending, int to, short to_events) {
    if ((from_events & (POLLIN | POLLHUP | POLLERR)) != 0 && pending.empty()) {
      char buf[65536];
      const ssize_t n = read(from, buf, sizeof buf);
      if (n <= 0) return false;
      pending.append(buf, static_cast<std::size_t>(n));
    }
    if (!pending.empty() && ((to_events & POLLOUT) != 0 || to_events == 0)) {
      const ssize_t n = send(to, pending.data(), pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN) return false;
      if (n > 0) pending.erase(0, static_cast<std::size_t>(n));
    }
    return true;
  }

  void run() {
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (const Pair& p : pairs_) {
        // Read a side only when what it sent before is through: bounded buffers.
        fds.push_back({p.down, static_cast<short>(p.to_up.empty() ? POLLIN : 0), 0});
        fds.push_back({p.up, static_cast<short>(p.to_down.empty() ? POLLIN : 0), 0});
        if (!p.to_up.empty()) fds[fds.size() - 1].events |= POLLOUT;
        if (!p.to_down.empty()) fds[fds.size() - 2].events |= POLLOUT;
      }
      if (poll(fds.data(), fds.size(), 1000) < 0) continue;
      if (fds[0].revents != 0) return;
      if ((fds[1].revents & POLLIN) != 0) {
        const int down = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        const int up = down < 0 ? -1 : connect_upstream();
        if (up >= 0) {
          pairs_.push_back({down, up, {}, {}});
        } else if (down >= 0) {
          close(down);
        }
      }
      for (std::size_t i = 0; i + 2 < fds.size() && i / 2 < pairs_.size(); i += 2) {
        Pair& p = pairs_[i / 2];
        const pollfd& d = fds[i + 2];
        const pollfd& u = fds[i + 3];
        const bool open = pump(p.down, d.revents, p.to_up, p.up, u.revents) &&
                          pump(p.up, u.revents, p.to_down, p.down, d.revents);
        if (!open) {  // an ordinary end: passed on as one
          close(p.down);
          close(p.up);
          p.down = p.up = -1;
        }
      }
      pairs_.erase(
          std::remove_if(pairs_.begin(), pairs_.end(), [](const Pair& p) { return p.down < 0; }),
          pairs_.end());
    }
  }

  int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::vector<Pair> pairs_;
  std::thread thread_;
};

int postgres_port() {
  const std::string url = test::postgres_url();
  const auto host_end = url.find('/', url.find('@') + 1);
  const auto colon = url.rfind(':', host_end);
  return std::stoi(url.substr(colon + 1, host_end - colon - 1));
}

std::string via_port(int port, const std::string& application_name) {
  std::string url = test::postgres_url();
  const auto host_end = url.find('/', url.find('@') + 1);
  const auto colon = url.rfind(':', host_end);
  url.replace(colon + 1, host_end - colon - 1, std::to_string(port));
  return url + (url.find('?') == std::string::npos ? "?" : "&") +
         "application_name=" + application_name;
}

class LocksTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string app = "bk_" + prefix;
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};

  void SetUp() override { cold.migrate(); }

  std::int64_t count(const std::string& sql) { return std::stoll(test::psql(sql)); }

  // n members of board `board`, "m0".."m<n-1>" with points 1..n, at `when`.
  void fill(const Config& config, const std::string& board, const char* when, int n) {
    service::Leaderboards lb(config, conn, Clock(at(when) + std::chrono::minutes{1}), &cold);
    std::vector<service::Update> updates;
    updates.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      updates.push_back({board, "m" + std::to_string(i), 1 + i, at(when), ""});
    }
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
  }

  // Waits (bounded) until `sql` counts more than zero.
  bool wait_for(const std::string& sql, std::chrono::seconds limit) {
    const auto end = Clock_::now() + limit;
    while (Clock_::now() < end) {
      if (count(sql) > 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Freezes the tick, makes its host vanish for PostgreSQL, and kills it.
  static void vanish(int pid, VanishingProxy& proxy) {
    kill(pid, SIGSTOP);
    proxy.cut();
    kill(pid, SIGKILL);
    test::wait_cli(pid);
  }
};

TEST_F(LocksTest, ATickThatVanishesMidArchiveLosesItsClaimWithinAMinute) {
  const char* boards = R"(  - name: big
    periods: [daily]
    max_points: 10000000
    hot_keep: 200000
    display: 10
    archive: {grace: 1m}
    retention: {default: 3650d}
)";
  const Config config = test::make_config(prefix, boards);
  fill(config, "big", "2027-01-04T10:00:00Z", 60000);
  VanishingProxy proxy(postgres_port());
  const std::string proxied = "/tmp/bk-test-" + prefix + "-proxied.yaml";
  std::ofstream(proxied) << test::config_text(prefix, boards, via_port(proxy.port(), app));
  const std::string direct = test::write_config(prefix, boards);
  const std::string now = "--now=2027-01-06T00:00:00Z";

  // The tick archives through the proxy, in small chunks; mid-COPY its host vanishes.
  const int pid = test::spawn_cli({"--config", proxied, now, "tick", "--chunk", "50"},
                                  "/tmp/bk-locks-" + prefix + ".log");
  ASSERT_TRUE(wait_for("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app +
                           "' AND state = 'active' AND query LIKE 'COPY%'",
                       std::chrono::seconds{60}))
      << test::read_file("/tmp/bk-locks-" + prefix + ".log");
  vanish(pid, proxy);
  const auto vanished = Clock_::now();
  // The server still holds the dead tick's COPY, waiting for rows that never come.
  ASSERT_EQ(count("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app +
                  "' AND query LIKE 'COPY%'"),
            1);

  // Ticks every second: busy while the claim lives, then one archives everything.
  const cold::PeriodKey key{"big", "daily", "2027-01-04"};
  int busy = 0;
  std::string out;
  while (archive.status(key) != cold::PeriodStatus::archived &&
         Clock_::now() < vanished + std::chrono::seconds{60}) {
    const auto r = test::run_cli({"--config", direct, now, "tick", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (r.out.find("another tick") != std::string::npos) ++busy;
    out = r.out;
    std::this_thread::sleep_for(std::chrono::seconds{1});
  }
  const auto took = std::chrono::duration_cast<std::chrono::seconds>(Clock_::now() - vanished);
  ASSERT_EQ(archive.status(key), cold::PeriodStatus::archived)
      << "still claimed by the vanished tick after " << took.count() << " s: " << out;
  EXPECT_GE(busy, 1) << "the vanished tick's claim was never held";
  EXPECT_EQ(conn.command({"EXISTS", hot::BoardKeys(prefix, "big").busy()}).as_int(), 0);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".history_rows"), 60000);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix +
                  ".history_rows WHERE rank = position AND points = 60001 - rank"),
            60000);
}

// SQL: how many advisory locks of board big's period 2027-01-04 the sessions named `app`
// hold.
std::string period_locks_held(const std::string& prefix, const std::string& app) {
  return "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE "
         "l.locktype = 'advisory' AND l.granted AND a.application_name = '" +
         app +
         "' AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) ="
         " hashtextextended('bk-period/" +
         prefix + "/big/daily/2027-01-04', 0)";
}

TEST_F(LocksTest, ATickThatVanishesMidSpillLosesItsClaimWithinAMinuteAndTheBusyStreakShows) {
  const char* boards = R"(  - name: big
    periods: [daily]
    max_points: 10000000
    hot_keep: 100
    display: 10
    retention: {default: 3650d}
)";
  const Config config = test::make_config(prefix, boards);
  fill(config, "big", "2027-01-04T10:00:00Z", 60000);
  VanishingProxy proxy(postgres_port());
  const std::string proxied = "/tmp/bk-test-" + prefix + "-proxied.yaml";
  std::ofstream(proxied) << test::config_text(prefix, boards, via_port(proxy.port(), app));
  const std::string direct = test::write_config(prefix, boards);
  const std::string now = "--now=2027-01-04T12:00:00Z";

  // The tick spills through the proxy, in small chunks, holding the period's lock on its
  // archive connection (idle meanwhile); its host vanishes halfway.
  const int pid = test::spawn_cli({"--config", proxied, now, "tick", "--chunk", "50"},
                                  "/tmp/bk-locks-" + prefix + ".log");
  ASSERT_TRUE(
      wait_for("SELECT count(*) FROM " + prefix + ".cold_members", std::chrono::seconds{60}))
      << test::read_file("/tmp/bk-locks-" + prefix + ".log");
  vanish(pid, proxy);
  const auto vanished = Clock_::now();
  // The period's lock (a session lock of the archive connection) stays held; the spill's
  // transaction in flight may hold its period's page lock too.
  ASSERT_EQ(count(period_locks_held(prefix, app)), 1);

  // Ticks every second with a metrics file: the streak grows by one per busy tick, and is
  // 0 again once a tick got to the period.
  const std::string metrics = "/tmp/bk-locks-" + prefix + ".prom";
  const hot::BoardKeys keys(prefix, "big");
  std::int64_t streak = 0;
  std::string out;
  while (conn.command({"ZCARD", keys.live("daily", "2027-01-04")}).as_int() > 100 &&
         Clock_::now() < vanished + std::chrono::seconds{60}) {
    const auto r =
        test::run_cli({"--config", direct, now, "tick", "--json", "--metrics-file", metrics});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    out = r.out;
    const bool busy = r.out.find("another tick") != std::string::npos;
    const std::string gauge = "boardkeeper_tick_periods_busy_streak_max ";
    const std::string text = test::read_file(metrics);
    const auto g = text.find("\n" + gauge);
    ASSERT_NE(g, std::string::npos) << text;
    const std::int64_t reported = std::stoll(text.substr(g + 1 + gauge.size()));
    EXPECT_EQ(reported, busy ? streak + 1 : 0) << r.out;
    EXPECT_NE(r.out.find("\"busy_streak\":" + std::to_string(reported)), std::string::npos)
        << r.out;
    streak = reported;
    std::this_thread::sleep_for(std::chrono::seconds{1});
  }
  const auto took = std::chrono::duration_cast<std::chrono::seconds>(Clock_::now() - vanished);
  ASSERT_EQ(conn.command({"ZCARD", keys.live("daily", "2027-01-04")}).as_int(), 100)
      << "still claimed by the vanished tick after " << took.count() << " s: " << out;
  EXPECT_EQ(streak, 0);
  EXPECT_EQ(conn.command({"EXISTS", keys.busy()}).as_int(), 0);  // streaks leave nothing
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".cold_members"), 59900);
}

}  // namespace
}  // namespace bk
