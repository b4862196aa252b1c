// Helpers for integration tests: the test servers, a key prefix of each test's own (so
// tests run in parallel on one Redis), configs from text, and running the real binary.
#pragma once
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "redis/connection.h"

namespace bk::cold {
class ColdStore;
}

namespace bk::test {

// BK_TEST_REDIS_URL as tests/run.sh sets it; fails the test when it is missing.
std::string redis_url();
// BK_TEST_REDIS_CLUSTER=1: BK_TEST_REDIS_URL is a seed of a Redis Cluster (configs say cluster:
// true).
bool on_cluster();
redis::Connection connect_redis();
// The default ingest stream of a test config: <prefix>:events, or <prefix>:{events} on a
// cluster (a stream needs a hash tag there).
std::string events_stream(const std::string& prefix);

// The port that MIGRATE reaches a cluster node on, given a connection to it and the port it
// was reached on: with `tls-cluster yes` Redis migrates keys over TLS, so its TLS port.
int migrate_port(redis::Connection& node, int port);

// BK_TEST_POSTGRES_URL as tests/run.sh sets it; fails the test when it is missing.
std::string postgres_url();

// A prefix no other test uses, e.g. "t3f9a1c". It is also the test's PostgreSQL schema.
std::string unique_prefix();

// The stream ids that the dead letters in the stream `dead` record (their stream_id field).
inline std::set<std::string> dead_lettered_ids(redis::Connection& conn, const std::string& dead) {
  std::set<std::string> recorded;
  const redis::Reply letters = conn.command({"XRANGE", dead, "-", "+"}).checked();
  for (const auto& e : letters.elements) {
    const auto& f = e.at(1);
    for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
      if (f.at(i).as_string() == "stream_id") recorded.insert(f.at(i + 1).as_string());
    }
  }
  return recorded;
}

// The boards section of the serve suites that need one board and nothing particular of it
// (rate_limit_test, token_reload_test, body_flood_test): "pts", one daily period.
inline constexpr const char* kOneBoard = R"(  - name: pts
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
)";

// A config whose redis and postgres sections point at the test servers (key prefix and
// schema `prefix`) and whose boards section is `boards_yaml` (a YAML sequence, indented by
// two spaces). `postgres_url` replaces the test server's URL when given.
std::string config_text(const std::string& prefix, const std::string& boards_yaml,
                        const std::string& postgres_url = "");
Config make_config(const std::string& prefix, const std::string& boards_yaml);
// Writes config_text to a temp file and returns its path.
std::string write_config(const std::string& prefix, const std::string& boards_yaml);

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs the boardkeeper binary with these arguments (no shell interpretation of them).
// With `stop_after` > 0, a run still going then gets SIGTERM (long-running commands such as
// ingest wait outages out instead of exiting).
RunResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                  std::chrono::milliseconds stop_after = std::chrono::milliseconds{0});

// Starts the boardkeeper binary in the background (output to files under /tmp; `env`: more
// NAME=value variables); returns its pid. wait_cli waits for it: the exit code, or 128 + signal.
int spawn_cli(const std::vector<std::string>& args, const std::string& log_path,
              const std::vector<std::string>& env = {});
int wait_cli(int pid);
// Waits up to `deadline` for a spawned command to stop (SIGSTOP: a pause point of
// core/stop_points.h) or end: true when it is stopped (it stays so, still to be waited for);
// false when it ended (waited for: its code, as wait_cli's, in `code`) or the deadline passed
// (a test failure; `code` -1).
bool wait_stopped(int pid, std::chrono::milliseconds deadline, int& code);
// The same for any program: `argv` (argv[0] its path), with `env` ("NAME=value") set on top of
// this process's environment.
int spawn_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  const std::string& log_path);

// The port a spawned ingest or serve logged it listens on ("... on http://127.0.0.1:PORT"),
// waited for up to 15 s; 0 (and a test failure) when it never appeared.
int listening_port(const std::string& log);

// Kills a spawned command that a failed assertion left running (one that exited and was
// waited for is not there any more).
struct Reaper {
  int pid;
  ~Reaper();
};

// The whole text of a file ("" when it cannot be read), e.g. a spawned command's log.
std::string read_file(const std::string& path);
// The stream entry ids marked in flight on a board (its :inflight:<stream> key: one member
// per script call, the call's order tokens joined by commas, "!" among them for a forced
// coalesced replace).
std::set<std::string> marked_entries(redis::Connection& conn, const std::string& key);

// member -> points in the period of `board` that contains `now` (up to 100,000 members,
// hot and cold), as the library reads them (the cold tier through `cold` when given).
std::map<std::string, std::int64_t> points_of(redis::Connection& conn, const Config& config,
                                              const std::string& board, const std::string& period,
                                              Instant now, cold::ColdStore* cold = nullptr);

// Runs one SQL statement with psql against the test PostgreSQL; returns its output.
std::string psql(const std::string& sql);
// The same against the server at `url`.
std::string psql_at(const std::string& url, const std::string& sql);

// A loopback port nobody listens on now.
int free_port();

// A redis-server of the test's own (on a free loopback port, in a temp dir), for tests that
// restart, flush, freeze or fill Redis: never the shared one. Stopped by the destructor.
class RedisServer {
 public:
  // `extra`: more redis-server arguments, e.g. {"--appendonly", "yes"}.
  explicit RedisServer(std::vector<std::string> extra = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string url(int db = 0) const;
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  redis::Connection connect() const;
  // SHUTDOWN NOSAVE (or a kill when it does not answer), then waits until it is gone.
  void stop();
  // Starts it again on the same port and directory (it loads what it persisted).
  void start();
  // SIGSTOP / SIGCONT: a server that accepts connections but never answers.
  void freeze();
  void thaw();

 private:
  std::vector<std::string> extra_;
  std::string dir_;
  int port_ = 0;
  int pid_ = -1;
};

// config_text for another Redis than the shared one.
std::string config_text_for(const std::string& redis_url, const std::string& prefix,
                            const std::string& boards_yaml, const std::string& postgres_url = "");
// Writes `text` to a temp file named after `prefix`; returns its path.
std::string write_text_config(const std::string& prefix, const std::string& text);

// Every key that starts with prefix (SCAN; for tests only: the product never scans).
std::vector<std::string> keys_with_prefix(redis::Connection& conn, const std::string& prefix);

}  // namespace bk::test
