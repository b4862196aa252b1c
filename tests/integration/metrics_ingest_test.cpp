// Ingest's live metrics and probes against real servers: /metrics, /healthz and /readyz of
// the real binary, its streams' bounds as gauges, idle clients and a Redis that does not
// answer. Every text is checked by the independent validator in tests/support.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics_fixture.h"

namespace bk {
namespace {

using namespace metrics_test;  // NOLINT(google-build-using-namespace): the suite's fixture
using namespace std::chrono_literals;

// Ready once its first Redis round trip succeeded; /healthz, an unknown path, a POST and
// garbage answered; the first scrape with every counter at 0.
void expect_probes_and_a_first_scrape(int port) {
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
}

// 40 events: 3 malformed, 2 late (the day before closed), 5 repeats of an earlier id.
std::vector<redis::Args> forty_events(const std::string& stream) {
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
  return events;
}

// What ingest counted of the forty events, and its process metrics.
void expect_counts_of_forty(const test::prom::Exposition& e) {
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
}

TEST_F(MetricsCliTest, IngestServesLiveMetricsAndProbes) {
  const std::string stream = prefix + ":events";
  const std::string log = dir + "/ingest.log";
  const int pid = test::spawn_cli(
      {"--config", config_path, "--now=2027-01-04T12:00:00Z", "ingest", "--listen", "127.0.0.1:0"},
      log);
  const int port = test::listening_port(log);
  ASSERT_GT(port, 0);
  ASSERT_NO_FATAL_FAILURE(expect_probes_and_a_first_scrape(port));

  std::vector<redis::Args> events = forty_events(stream);
  for (const auto& r : conn.pipeline(events)) r.checked();

  // The applied counter moves while ingest runs, up to the number of valid events.
  double applied = 0;
  for (int i = 0; i < 200 && applied < 30; ++i, std::this_thread::sleep_for(50ms)) {
    const auto e = parse_ok(get(port, "/metrics").body);
    applied = value(e, "boardkeeper_ingest_events_applied_total");
  }
  EXPECT_EQ(applied, 30);
  std::this_thread::sleep_for(300ms);  // nothing more arrives
  expect_counts_of_forty(parse_ok(get(port, "/metrics").body));

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

}  // namespace
}  // namespace bk
