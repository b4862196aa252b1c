// Metrics of the real binary against real servers: tick's metrics file and Pushgateway push
// (to a fake gateway here: the Pushgateway is not a dependency of the project), ingest's
// /metrics, /healthz and /readyz, and the archive progress line on a terminal. Every text
// is checked by the independent validator in tests/support.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <httplib.h>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "harness.h"
#include "prom_text.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

double now_unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Dates are in 2027 with a 10-year retention: Redis expires keys by its own clock.
const char* kBoards = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 10
    display: 5
    retention: {default: 3650d}
)";

test::prom::Exposition parse_ok(const std::string& text) {
  const auto parsed = test::prom::parse(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error << "\n" << text;
  EXPECT_FALSE(text.empty());
  return parsed.exposition;
}

double value(const test::prom::Exposition& e, const std::string& name,
             const test::prom::LabelMap& labels = {}) {
  const auto v = e.value(name, labels);
  EXPECT_TRUE(v.has_value()) << name << " is missing";
  return v.value_or(-1);
}

// A loopback listening socket on a free port.
int listen_loopback(int& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

struct HttpAnswer {
  int status = 0;
  std::string head;
  std::string body;
};

// One GET (or any request text) to 127.0.0.1:port; status 0 when no answer came.
// One request on a connection of its own, read until the server closes it (send
// "Connection: close"); `timeout_s` bounds each read, as a probe's timeout does.
HttpAnswer http(int port, const std::string& request, int timeout_s = 10) {
  HttpAnswer out;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return out;
  }
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
  close(fd);
  const auto split = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || split == std::string::npos) return out;
  out.status = std::stoi(all.substr(9, 3));
  out.head = all.substr(0, split);
  out.body = all.substr(split + 4);
  return out;
}

HttpAnswer get(int port, const std::string& path, int timeout_s = 10) {
  return http(port, "GET " + path + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
              timeout_s);
}

// The Content-Length of a request head (0 without one).
std::size_t content_length(const std::string& head) {
  std::string lower = head;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto at = lower.find("\r\ncontent-length:");
  return at == std::string::npos ? 0 : std::stoul(head.substr(at + 17));
}

// A fake Pushgateway: accepts one request, records it, answers `status`.
struct FakeGateway {
  int port = 0;
  int fd = -1;
  std::thread thread;
  std::string method, path, head, body;

  explicit FakeGateway(int status) {
    fd = listen_loopback(port);
    thread = std::thread([this, status] {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 60000) != 1) return;
      const int c = accept(fd, nullptr, nullptr);
      timeval tv{10, 0};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::string all;
      char buf[4096];
      std::size_t want = std::string::npos;
      while (all.size() < want) {
        const ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        all.append(buf, static_cast<size_t>(n));
        const auto split = all.find("\r\n\r\n");
        if (split != std::string::npos && want == std::string::npos) {
          head = all.substr(0, split);
          want = split + 4 + content_length(head);
        }
      }
      const auto split = all.find("\r\n\r\n");
      if (split != std::string::npos) body = all.substr(split + 4);
      std::istringstream line(head);
      line >> method >> path;
      const std::string reply = "HTTP/1.1 " + std::to_string(status) +
                                " X\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops\n";
      send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      close(c);
    });
  }
  ~FakeGateway() {
    if (thread.joinable()) thread.join();
    close(fd);
  }
  void wait() { thread.join(); }
};

class MetricsCliTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  std::string dir = "/tmp/bk-metrics-" + prefix;
  std::string file = dir + "/tick.prom";

  void SetUp() override {
    ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
    const auto r = test::run_cli({"--config", config_path, "migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  test::RunResult bk(const std::string& now, std::vector<std::string> args,
                     const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {"--config", config_path, "--now=" + now});
    return test::run_cli(args, env);
  }

  // n members, "m0".."m<n-1>", each with its own points, in one day of board pts.
  void fill(const char* day_time, int n) {
    cold::ColdStore cold(test::postgres_url(), prefix);
    service::Leaderboards lb(config, conn, Clock(at(day_time)), &cold);
    std::vector<service::Update> updates;
    updates.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      updates.push_back({"pts", "m" + std::to_string(i), 1 + i, at(day_time), ""});
    }
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
  }
};

TEST_F(MetricsCliTest, TickMetricsFileSaysWhatTheTickDid) {
  fill("2027-01-04T09:00:00Z", 50);

  // Day 1 is open: 40 of its 50 members spill past hot_keep 10.
  auto r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", file, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"spilled\":40"), std::string::npos) << r.out;
  auto e = parse_ok(test::read_file(file));
  EXPECT_EQ(value(e, "boardkeeper_tick_members_spilled"), 40);
  EXPECT_EQ(value(e, "boardkeeper_tick_periods"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_periods_archived"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_exit_code"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_dry_run"), 0);
  EXPECT_EQ(value(e, "boardkeeper_build_info", {{"version", "0.1.0"}}), 1);
  const double first_success = value(e, "boardkeeper_tick_last_success_timestamp_seconds");
  EXPECT_NEAR(first_success, now_unix(), 60);  // real time, not --now
  EXPECT_EQ(e.family("boardkeeper_tick_members_spilled")->type, "gauge");
  EXPECT_GT(value(e, "boardkeeper_tick_phase_duration_seconds", {{"phase", "spill"}}), 0);
  EXPECT_GE(value(e, "boardkeeper_tick_duration_seconds"),
            value(e, "boardkeeper_tick_phase_duration_seconds", {{"phase", "spill"}}));
  // The summary line is one line of text, no progress output off a terminal.
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;

  // Day 2 opens with 30 members; day 1 closes and is archived: 10 hot + 40 cold rows.
  fill("2027-01-05T09:00:00Z", 30);
  r = bk("2027-01-05T12:00:00Z", {"--log-format", "json", "tick", "--metrics-file", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e = parse_ok(test::read_file(file));
  EXPECT_EQ(value(e, "boardkeeper_tick_members_spilled"), 20);
  EXPECT_EQ(value(e, "boardkeeper_tick_periods"), 2);
  EXPECT_EQ(value(e, "boardkeeper_tick_periods_archived"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_rows_archived", {{"tier", "hot"}}), 10);
  EXPECT_EQ(value(e, "boardkeeper_tick_rows_archived", {{"tier", "cold"}}), 40);
  EXPECT_EQ(value(e, "boardkeeper_tick_periods_lost"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_boards"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_boards_failed"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_redis_errors"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_postgres_errors"), 0);
  EXPECT_GE(value(e, "boardkeeper_tick_last_success_timestamp_seconds"), first_success);
  // With JSON logs the summary is one object with the numbers as fields.
  EXPECT_NE(r.err.find("\"spilled\":20,\"kept_hot\":0,\"archived\":1,\"rows_archived\":50"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  // A dry run says what it would do and keeps the last real success.
  const double success = value(e, "boardkeeper_tick_last_success_timestamp_seconds");
  fill("2027-01-05T10:00:00Z", 15);  // m0..m14 score again (rehydrated): 25 hot, 15 to spill
  r = bk("2027-01-05T12:00:00Z", {"tick", "--dry-run", "--metrics-file", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e = parse_ok(test::read_file(file));
  EXPECT_EQ(value(e, "boardkeeper_tick_dry_run"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_members_spilled"), 15);
  EXPECT_EQ(value(e, "boardkeeper_tick_last_success_timestamp_seconds"), success);

  // Nothing but the file is left in its directory (the temp file was renamed).
  int entries = 0;
  DIR* d = opendir(dir.c_str());
  for (dirent* de; (de = readdir(d)) != nullptr;) entries += de->d_name[0] == '.' ? 0 : 1;
  closedir(d);
  EXPECT_EQ(entries, 1);
}

TEST_F(MetricsCliTest, FailedTicksStillWriteMetrics) {
  fill("2027-01-04T09:00:00Z", 12);
  auto r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double success =
      value(parse_ok(test::read_file(file)), "boardkeeper_tick_last_success_timestamp_seconds");

  // PostgreSQL unreachable: exit 3, counted as a PostgreSQL error; the success time stays.
  r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", file},
         {"BOARDKEEPER_POSTGRES_URL=postgresql://boardkeeper@127.0.0.1:1/boards"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto e = parse_ok(test::read_file(file));
  EXPECT_EQ(value(e, "boardkeeper_tick_exit_code"), 3);
  EXPECT_EQ(value(e, "boardkeeper_tick_postgres_errors"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_redis_errors"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_last_success_timestamp_seconds"), success);
  EXPECT_NEAR(value(e, "boardkeeper_tick_last_run_timestamp_seconds"), now_unix(), 60);

  // Redis unreachable likewise.
  r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", file},
         {"BOARDKEEPER_REDIS_URL=redis://127.0.0.1:1/0"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  e = parse_ok(test::read_file(file));
  EXPECT_EQ(value(e, "boardkeeper_tick_redis_errors"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_postgres_errors"), 0);
  EXPECT_EQ(value(e, "boardkeeper_tick_last_success_timestamp_seconds"), success);

  // A board no config entry matches fails that board (exit 1); the others go on.
  conn.command({"SADD", prefix + ":boards", "stranger"}).checked();
  r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", file});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  e = parse_ok(test::read_file(file));
  EXPECT_EQ(value(e, "boardkeeper_tick_exit_code"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_boards"), 2);
  EXPECT_EQ(value(e, "boardkeeper_tick_boards_failed"), 1);
  EXPECT_EQ(value(e, "boardkeeper_tick_last_success_timestamp_seconds"), success);

  // Without a previous file there is no success time to carry.
  const std::string fresh = dir + "/fresh.prom";
  r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", fresh});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(
      parse_ok(test::read_file(fresh)).value("boardkeeper_tick_last_success_timestamp_seconds"));

  // Usage errors come before any work.
  r = bk("2027-01-04T12:00:00Z", {"tick", "--metrics-file", "/nonexistent-dir/x.prom"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST_F(MetricsCliTest, TickPushesToAPushgateway) {
  fill("2027-01-04T09:00:00Z", 25);
  {
    FakeGateway gw(200);
    const auto r =
        bk("2027-01-04T12:00:00Z",
           {"tick", "--pushgateway", "http://127.0.0.1:" + std::to_string(gw.port) + "/base/"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    gw.wait();
    EXPECT_EQ(gw.method, "PUT");  // a success replaces the whole group
    EXPECT_EQ(gw.path, "/base/metrics/job/boardkeeper_tick");
    EXPECT_NE(gw.head.find("Content-Type: text/plain; version=0.0.4"), std::string::npos)
        << gw.head;
    const auto e = parse_ok(gw.body);
    EXPECT_EQ(value(e, "boardkeeper_tick_members_spilled"), 15);
    EXPECT_TRUE(e.value("boardkeeper_tick_last_success_timestamp_seconds"));
  }
  {
    // A failed tick POSTs without the success time: the gateway keeps the last one.
    FakeGateway gw(202);
    const auto r = bk("2027-01-04T12:00:00Z",
                      {"tick", "--pushgateway", "http://127.0.0.1:" + std::to_string(gw.port)},
                      {"BOARDKEEPER_POSTGRES_URL=postgresql://boardkeeper@127.0.0.1:1/boards"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    gw.wait();
    EXPECT_EQ(gw.method, "POST");
    EXPECT_EQ(gw.path, "/metrics/job/boardkeeper_tick");
    const auto e = parse_ok(gw.body);
    EXPECT_EQ(value(e, "boardkeeper_tick_exit_code"), 3);
    EXPECT_FALSE(e.value("boardkeeper_tick_last_success_timestamp_seconds"));
  }
  {
    // A gateway that refuses: a warning, and the tick's exit code is its own.
    FakeGateway gw(500);
    const auto r = bk("2027-01-04T12:00:00Z",
                      {"tick", "--pushgateway", "http://127.0.0.1:" + std::to_string(gw.port)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("pushgateway answered 500"), std::string::npos) << r.err;
  }
  // Nobody listening: likewise.
  int port = 0;
  close(listen_loopback(port));
  auto r = bk("2027-01-04T12:00:00Z",
              {"tick", "--pushgateway", "http://127.0.0.1:" + std::to_string(port)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;
  for (const char* bad :
       {"ftp://gw:9091", "gw:9091", "http://", "http://u:p%zz@gw:9091", "https://gw/x?y=1"}) {
    r = bk("2027-01-04T12:00:00Z", {"tick", "--pushgateway", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
  }
}

TEST_F(MetricsCliTest, TickPushesWithBasicAuthAndOverHttps) {
  fill("2027-01-04T09:00:00Z", 5);
  {
    // Basic auth from the URL's user info (percent-decoded); the password never shows.
    FakeGateway gw(200);
    const auto r = bk("2027-01-04T12:00:00Z",
                      {"tick", "--pushgateway",
                       "http://pusher:S3cr%2Ft@127.0.0.1:" + std::to_string(gw.port) + "/pg"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    gw.wait();
    EXPECT_EQ(gw.path, "/pg/metrics/job/boardkeeper_tick");
    EXPECT_NE(gw.head.find("Authorization: Basic cHVzaGVyOlMzY3IvdA=="), std::string::npos)
        << gw.head;
    EXPECT_EQ((r.out + r.err).find("S3cr"), std::string::npos);
  }
  // HTTPS: a gateway with the test certificate (tests/run.sh makes it), verified against the
  // test CA given as the system store (SSL_CERT_FILE); refused without it.
  const char* tls_dir = std::getenv("BK_TEST_TLS_DIR");
  ASSERT_NE(tls_dir, nullptr) << "BK_TEST_TLS_DIR is not set: run the tests through tests/run.sh";
  const std::string dir_path = tls_dir;
  httplib::SSLServer server((dir_path + "/server.crt").c_str(), (dir_path + "/server.key").c_str());
  ASSERT_TRUE(server.is_valid());
  std::string method, path, auth;
  std::mutex seen;
  const auto record = [&](const httplib::Request& request, httplib::Response& response) {
    const std::lock_guard<std::mutex> lock(seen);
    method = request.method;
    path = request.path;
    auth = request.get_header_value("Authorization");
    response.status = 200;
  };
  server.Put(".*", record);
  server.Post(".*", record);
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string url = "https://pusher:S3cr%2Ft@127.0.0.1:" + std::to_string(port);
  auto r = bk("2027-01-04T12:00:00Z", {"tick", "--pushgateway", url},
              {"SSL_CERT_FILE=" + dir_path + "/ca.crt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warn"), std::string::npos) << r.err;
  {
    const std::lock_guard<std::mutex> lock(seen);
    EXPECT_EQ(method, "PUT");
    EXPECT_EQ(path, "/metrics/job/boardkeeper_tick");
    EXPECT_EQ(auth, "Basic cHVzaGVyOlMzY3IvdA==");
    method.clear();
  }
  r = bk("2027-01-04T12:00:00Z", {"tick", "--pushgateway", url},
         {"SSL_CERT_FILE=" + dir_path + "/other-ca.crt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the tick's own exit code
  EXPECT_NE(r.err.find("certificate"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("S3cr"), std::string::npos) << r.err;
  {
    const std::lock_guard<std::mutex> lock(seen);
    EXPECT_EQ(method, "");  // nothing reached the server
  }
  server.stop();
  serving.join();
}

TEST_F(MetricsCliTest, IngestServesLiveMetricsAndProbes) {
  const std::string stream = prefix + ":events";
  const std::string log = dir + "/ingest.log";
  const int pid = test::spawn_cli(
      {"--config", config_path, "--now=2027-01-04T12:00:00Z", "ingest", "--listen", "127.0.0.1:0"},
      log);
  const int port = test::listening_port(log);
  ASSERT_GT(port, 0);
  // Ready once its first Redis round trip succeeded.
  HttpAnswer ready;
  for (int i = 0; i < 100 && ready.status != 200; ++i, std::this_thread::sleep_for(50ms)) {
    ready = get(port, "/readyz");
  }
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(get(port, "/healthz").status, 200);
  const HttpAnswer missing = get(port, "/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.head.find("Connection: close"), std::string::npos);
  EXPECT_EQ(
      http(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").status,
      405);
  EXPECT_EQ(http(port, "garbage\r\n\r\n").status, 400);
  const HttpAnswer first = get(port, "/metrics");
  ASSERT_EQ(first.status, 200);
  EXPECT_NE(first.head.find("text/plain; version=0.0.4"), std::string::npos) << first.head;
  auto e = parse_ok(first.body);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_applied_total"), 0);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_refused_total", {{"reason", "closed"}}), 0);
  // Every reason is there from the first scrape, the last ones of the enumeration too.
  for (const char* reason : {"invalid_profile", "invalid_event_id", "invalid_time", "banned"}) {
    EXPECT_EQ(value(e, "boardkeeper_ingest_events_refused_total", {{"reason", reason}}), 0)
        << reason;
  }
  EXPECT_EQ(e.family("boardkeeper_ingest_events_applied_total")->type, "counter");

  // 40 events: 3 malformed, 2 late (the day before closed), 5 repeats of an earlier id.
  std::vector<redis::Args> events;
  events.reserve(40);
  for (int i = 0; i < 30; ++i) {
    events.push_back({"XADD", stream, "*", "board", "pts", "member", "m" + std::to_string(i),
                      "value", "1", "at", "2027-01-04T10:00:00Z", "id", "e" + std::to_string(i)});
  }
  for (int i = 0; i < 5; ++i) events.push_back(events[static_cast<std::size_t>(i)]);
  for (int i = 0; i < 3; ++i) {
    events.push_back({"XADD", stream, "*", "board", "pts", "member", "x", "value", "many"});
  }
  for (int i = 0; i < 2; ++i) {
    events.push_back({"XADD", stream, "*", "board", "pts", "member", "late", "value", "1", "at",
                      "2027-01-02T10:00:00Z"});
  }
  for (const auto& r : conn.pipeline(events)) r.checked();

  // The applied counter moves while ingest runs, up to the number of valid events.
  double applied = 0;
  for (int i = 0; i < 200 && applied < 30; ++i, std::this_thread::sleep_for(50ms)) {
    e = parse_ok(get(port, "/metrics").body);
    applied = value(e, "boardkeeper_ingest_events_applied_total");
  }
  EXPECT_EQ(applied, 30);
  std::this_thread::sleep_for(300ms);  // nothing more arrives
  e = parse_ok(get(port, "/metrics").body);
  EXPECT_EQ(value(e, "boardkeeper_ingest_entries_read_total"), 40);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_applied_total"), 30);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_duplicate_total"), 5);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_refused_total", {{"reason", "malformed"}}), 3);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_refused_total", {{"reason", "closed"}}), 2);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_dead_lettered_total"), 5);
  EXPECT_EQ(value(e, "boardkeeper_redis_errors_total"), 0);
  const double batches = value(e, "boardkeeper_ingest_batch_duration_seconds_count");
  EXPECT_GE(batches, 1);
  EXPECT_EQ(value(e, "boardkeeper_ingest_batch_duration_seconds_bucket", {{"le", "+Inf"}}),
            batches);
  EXPECT_NEAR(value(e, "boardkeeper_ingest_last_redis_success_timestamp_seconds"), now_unix(), 30);
  EXPECT_FALSE(e.value("boardkeeper_tick_last_success_timestamp_seconds"));  // tick's only
  // The process metrics of Prometheus' client libraries, read from /proc.
  EXPECT_NEAR(value(e, "process_start_time_seconds"), now_unix(), 120);
  EXPECT_GT(value(e, "process_resident_memory_bytes"), 1e6);
  EXPECT_GT(value(e, "process_virtual_memory_bytes"), value(e, "process_resident_memory_bytes"));
  EXPECT_GE(value(e, "process_open_fds"), 5);  // stdio, Redis, the listener, a client
  EXPECT_LT(value(e, "process_open_fds"), value(e, "process_max_fds"));
  // There (value() is -1 when missing); 0 for a process that has used less than a clock tick.
  EXPECT_GE(value(e, "process_cpu_seconds_total"), 0);

  // More events: the counter moves again.
  events.clear();
  for (int i = 0; i < 12; ++i) {
    events.push_back({"XADD", stream, "*", "board", "pts", "member", "n" + std::to_string(i),
                      "value", "2", "at", "2027-01-04T11:00:00Z"});
  }
  for (const auto& r : conn.pipeline(events)) r.checked();
  for (int i = 0; i < 200 && applied < 42; ++i, std::this_thread::sleep_for(50ms)) {
    applied =
        value(parse_ok(get(port, "/metrics").body), "boardkeeper_ingest_events_applied_total");
  }
  EXPECT_EQ(applied, 42);

  // SIGTERM stops the consumer and the server with it.
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(get(port, "/healthz").status, 0);  // nobody listens any more
}

// The stream's bounds as gauges: lag and pending of the group, the stream's length (held
// up here by another group that reads nothing), and what was trimmed.
TEST_F(MetricsCliTest, IngestReportsItsStreamsLagPendingAndLength) {
  const std::string stream = prefix + ":events";
  const std::string dead = stream + ":dead";
  conn.command({"SET", dead, "not a stream"}).checked();  // dead letters fail: stay pending
  std::vector<redis::Args> events;
  for (int i = 0; i < 20; ++i) {
    events.push_back({"XADD", stream, "*", "board", "pts", "member", "m" + std::to_string(i),
                      "value", "1", "at", "2027-01-04T10:00:00Z"});
  }
  for (int i = 0; i < 3; ++i) {
    events.push_back({"XADD", stream, "*", "board", "pts", "member", "x", "value", "many"});
  }
  for (const auto& r : conn.pipeline(events)) r.checked();
  conn.command({"XGROUP", "CREATE", stream, "other", "0"}).checked();
  const std::string log = dir + "/ingest-bounds.log";
  const int pid = test::spawn_cli(
      {"--config", config_path, "--now=2027-01-04T12:00:00Z", "ingest", "--listen", "127.0.0.1:0"},
      log);
  const int port = test::listening_port(log);
  ASSERT_GT(port, 0);
  const test::prom::LabelMap labels{{"stream", stream}};
  test::prom::Exposition e;
  const auto gauge = [&](const std::string& name) {
    const auto v = e.value(name, labels);
    return v ? *v : -1.0;
  };
  for (int i = 0; i < 100; ++i, std::this_thread::sleep_for(100ms)) {
    e = parse_ok(get(port, "/metrics").body);
    if (gauge("boardkeeper_ingest_pending_entries") == 3 &&
        gauge("boardkeeper_ingest_lag_entries") == 0) {
      break;
    }
  }
  EXPECT_EQ(gauge("boardkeeper_ingest_lag_entries"), 0);
  EXPECT_EQ(gauge("boardkeeper_ingest_pending_entries"), 3);
  EXPECT_EQ(gauge("boardkeeper_ingest_stream_length_entries"), 23);
  EXPECT_EQ(gauge("boardkeeper_ingest_entries_trimmed_total"), 0);
  EXPECT_EQ(e.family("boardkeeper_ingest_lag_entries")->type, "gauge");

  // The other group goes away: what ours acknowledged is trimmed, up to its first pending.
  conn.command({"XGROUP", "DESTROY", stream, "other"}).checked();
  for (int i = 0; i < 100; ++i, std::this_thread::sleep_for(100ms)) {
    e = parse_ok(get(port, "/metrics").body);
    if (gauge("boardkeeper_ingest_stream_length_entries") == 3) break;
  }
  EXPECT_EQ(gauge("boardkeeper_ingest_stream_length_entries"), 3);
  EXPECT_EQ(gauge("boardkeeper_ingest_entries_trimmed_total"), 20);
  EXPECT_EQ(gauge("boardkeeper_ingest_lag_entries"), 0);  // still known after trimming
  EXPECT_EQ(conn.command({"XLEN", stream}).as_int(), 3);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
}

// A client that connects and sends nothing (or half a request) must not hold up the probes:
// a kubelet gives each probe 1-2 s. The hand-written server served clients one at a time,
// so /healthz waited for the idle one's 5 s timeout.
TEST_F(MetricsCliTest, IdleClientsDoNotHoldUpTheProbes) {
  const std::string log = dir + "/ingest-idle.log";
  const int pid = test::spawn_cli(
      {"--config", config_path, "--now=2027-01-04T12:00:00Z", "ingest", "--listen", "127.0.0.1:0"},
      log);
  test::Reaper reaper{pid};
  const int port = test::listening_port(log);
  ASSERT_GT(port, 0);
  std::vector<int> idle;
  for (const char* sent : {"", "GET /metr", ""}) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    send(fd, sent, std::strlen(sent), MSG_NOSIGNAL);
    idle.push_back(fd);
  }
  std::this_thread::sleep_for(100ms);  // accepted, and being waited for
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(get(port, "/healthz", 2).status, 200) << "probe " << i;
    EXPECT_EQ(get(port, "/metrics", 2).status, 200) << "scrape " << i;
  }
  for (const int fd : idle) close(fd);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
}

TEST_F(MetricsCliTest, IngestIsNotReadyWhileRedisDoesNotAnswer) {
  // A "Redis" that accepts connections and never answers: ingest waits for its first reply.
  int redis_port = 0;
  const int silent = listen_loopback(redis_port);
  const std::string log = dir + "/ingest-silent.log";
  const std::string env = "BOARDKEEPER_REDIS_URL=redis://127.0.0.1:" + std::to_string(redis_port);
  const int pid = fork();
  if (pid == 0) {
    putenv(const_cast<char*>(env.c_str()));
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(BK_BINARY, BK_BINARY, "--config", config_path.c_str(), "ingest", "--listen",
          "127.0.0.1:0", static_cast<char*>(nullptr));
    _exit(127);
  }
  const int port = test::listening_port(log);
  ASSERT_GT(port, 0);
  const HttpAnswer ready = get(port, "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_EQ(get(port, "/healthz").status, 200);  // just started: alive
  const auto e = parse_ok(get(port, "/metrics").body);
  EXPECT_EQ(value(e, "boardkeeper_ingest_events_applied_total"), 0);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(silent);
}

TEST_F(MetricsCliTest, LongArchivesShowProgressOnATerminal) {
  // 3000 hot + 3000 cold members, chunks of 100: the line shows from the first chunk on,
  // then the merge.
  fill("2027-01-04T09:00:00Z", 6000);
  const std::string two_days = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 3000
    display: 5
    retention: {default: 3650d}
)";
  const std::string path = test::write_config(prefix, two_days);
  auto r = test::run_cli({"--config", path, "--now=2027-01-04T12:00:00Z", "tick"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave = ptsname(master);
  const int pid = fork();
  if (pid == 0) {
    const int fd = open(slave.c_str(), O_RDWR);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(fd, 2);
    execl(BK_BINARY, BK_BINARY, "--config", path.c_str(), "--now=2027-01-06T12:00:00Z", "tick",
          "--chunk", "100", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string seen;
  char buf[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 120000) != 1) break;
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child closed the terminal
    seen.append(buf, static_cast<std::size_t>(n));
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << seen;
  EXPECT_NE(seen.find("\r\033[Karchiving pts daily 2027-01-04: "), std::string::npos) << seen;
  EXPECT_NE(seen.find(": 100 / 3000 hot members copied (3%), "), std::string::npos) << seen;
  EXPECT_NE(seen.find(": merging 3000 hot members with up to 3000 cold rows in PostgreSQL"),
            std::string::npos)
      << seen;
  // The line is erased before the summary is logged.
  const auto summary = seen.find("info tick:");
  ASSERT_NE(summary, std::string::npos) << seen;
  const auto erased = seen.rfind("\r\033[K", summary);
  ASSERT_NE(erased, std::string::npos) << seen;
  EXPECT_EQ(seen.substr(erased, summary - erased).find("archiving"), std::string::npos) << seen;
}

}  // namespace
}  // namespace bk
