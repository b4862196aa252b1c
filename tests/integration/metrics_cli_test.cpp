// Metrics of the real binary against real servers: tick's metrics file and Pushgateway push
// (to a fake gateway here: the Pushgateway is not a dependency of the project), ingest's
// /metrics, /healthz and /readyz, and the archive progress line on a terminal. Every text
// is checked by the independent validator in tests/support.
// (Ingest's metrics and probes: metrics_ingest_test.cpp, the same binary.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics_fixture.h"

namespace bk {
namespace {

using namespace metrics_test;  // NOLINT(google-build-using-namespace): the suite's fixture
using namespace std::chrono_literals;

// How many entries not starting with a dot `dir` holds.
int visible_entries(const std::string& dir) {
  int entries = 0;
  DIR* d = opendir(dir.c_str());
  for (dirent* de; (de = readdir(d)) != nullptr;) entries += de->d_name[0] == '.' ? 0 : 1;
  closedir(d);
  return entries;
}

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
  EXPECT_EQ(visible_entries(dir), 1);
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
