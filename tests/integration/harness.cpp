// Integration test helpers.
#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "redis/url.h"
#include "service/leaderboards.h"

extern char** environ;

namespace bk::test {

std::string redis_url() {
  const char* url = std::getenv("BK_TEST_REDIS_URL");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "BK_TEST_REDIS_URL is not set: run the tests through tests/run.sh";
    throw std::runtime_error("no test redis");
  }
  return url;
}

int migrate_port(redis::Connection& node, int port) {
  const redis::Reply tls = node.command({"CONFIG", "GET", "tls-cluster"}).checked();
  if (tls.elements.size() < 2 || tls.at(1).as_string() != "yes") return port;
  return std::stoi(node.command({"CONFIG", "GET", "tls-port"}).checked().at(1).as_string());
}

std::string postgres_url() {
  const char* url = std::getenv("BK_TEST_POSTGRES_URL");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "BK_TEST_POSTGRES_URL is not set: run the tests through tests/run.sh";
    throw std::runtime_error("no test postgres");
  }
  return url;
}

bool on_cluster() {
  const char* cluster = std::getenv("BK_TEST_REDIS_CLUSTER");
  return cluster != nullptr && std::string(cluster) == "1";
}

std::string events_stream(const std::string& prefix) {
  return prefix + (on_cluster() ? ":{events}" : ":events");
}

redis::Connection connect_redis() {
  redis::Options o = redis::parse_url(redis_url());
  o.cluster = on_cluster();
  return redis::Connection(o);
}

std::string unique_prefix() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  std::ostringstream s;
  s << "t" << std::hex << (rd() & 0xffffffU) << getpid() << "x" << counter++;
  return s.str();
}

std::string config_text_for(const std::string& redis, const std::string& prefix,
                            const std::string& boards_yaml, const std::string& pg_url) {
  const char* env_pg = std::getenv("BK_TEST_POSTGRES_URL");
  const std::string pg = !pg_url.empty() ? pg_url : env_pg != nullptr ? env_pg : "";
  std::string text = "redis:\n  url: " + redis + "\n  key_prefix: " + prefix + "\n";
  if (on_cluster()) text += "  cluster: true\n";
  if (!pg.empty()) text += "postgres:\n  url: " + pg + "\n  schema: " + prefix + "\n";
  return text + "boards:\n" + boards_yaml;
}

std::string config_text(const std::string& prefix, const std::string& boards_yaml,
                        const std::string& pg_url) {
  return config_text_for(redis_url(), prefix, boards_yaml, pg_url);
}

std::string write_text_config(const std::string& prefix, const std::string& text) {
  const std::string path = "/tmp/bk-test-" + prefix + ".yaml";
  std::ofstream(path) << text;
  return path;
}

Config make_config(const std::string& prefix, const std::string& boards_yaml) {
  return parse_config(config_text(prefix, boards_yaml), "test.yaml", {});
}

std::string write_config(const std::string& prefix, const std::string& boards_yaml) {
  return write_text_config(prefix, config_text(prefix, boards_yaml));
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

RedisServer::RedisServer(std::vector<std::string> extra) : extra_(std::move(extra)) {
  char dir[] = "/tmp/bk-redis-XXXXXX";
  dir_ = mkdtemp(dir);
  port_ = free_port();
  start();
}

RedisServer::~RedisServer() {
  stop();
  std::system(("rm -rf '" + dir_ + "'").c_str());
}

std::string RedisServer::url(int db) const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

redis::Connection RedisServer::connect() const {
  return redis::Connection(redis::parse_url(url()));
}

void RedisServer::start() {
  if (pid_ > 0) return;
  std::vector<std::string> args{"redis-server",
                                "--port",
                                std::to_string(port_),
                                "--bind",
                                "127.0.0.1",
                                "--dir",
                                dir_,
                                "--save",
                                "",
                                "--appendonly",
                                "no",
                                "--logfile",
                                dir_ + "/redis.log"};
  args.insert(args.end(), extra_.begin(), extra_.end());  // later arguments win
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp("redis-server", argv.data());
    _exit(127);
  }
  pid_ = pid;
  for (int i = 0; i < 100; ++i) {
    try {
      if (connect().command({"PING"}).str == "PONG") return;
    } catch (const std::exception&) {
      // not listening yet (or still loading)
    }
    usleep(50 * 1000);
  }
  ADD_FAILURE() << "redis-server on port " << port_ << " did not start";
}

void RedisServer::freeze() {
  if (pid_ > 0) kill(pid_, SIGSTOP);
}

void RedisServer::thaw() {
  if (pid_ > 0) kill(pid_, SIGCONT);
}

void RedisServer::stop() {
  if (pid_ <= 0) return;
  thaw();  // a frozen server cannot shut down
  try {
    connect().command({"SHUTDOWN", "NOSAVE"});
  } catch (const std::exception&) {
    // SHUTDOWN closes the connection without a reply
  }
  for (int i = 0; i < 100 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) usleep(50 * 1000);
  if (waitpid(pid_, nullptr, WNOHANG) == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

namespace {

std::string slurp(int fd) {
  std::string out;
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

}  // namespace

namespace {

// Whether the process has a handler for SIGTERM (the SigCgt mask of /proc/<pid>/status),
// waiting for it at most 60 s.
bool catches_sigterm(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{60};
  while (std::chrono::steady_clock::now() < give_up) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    if (!status) return true;  // gone
    while (std::getline(status, line)) {
      if (line.rfind("State:", 0) == 0 && line.find('Z') != std::string::npos) return true;
      if (line.rfind("SigCgt:", 0) != 0) continue;
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      if ((mask >> (SIGTERM - 1)) & 1ULL) return true;
    }
    usleep(20 * 1000);
  }
  return true;
}

}  // namespace

RunResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env,
                  std::chrono::milliseconds stop_after) {
  char out_path[] = "/tmp/bk-out-XXXXXX";
  char err_path[] = "/tmp/bk-err-XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  unlink(out_path);
  unlink(err_path);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<std::string> all{BK_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    execv(BK_BINARY, argv.data());
    _exit(127);
  }
  int status = 0;
  if (stop_after.count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + stop_after;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      // SIGTERM only once the command handles it: on a loaded machine (or under ASan) a
      // process can take longer than stop_after to get there, and would die of the signal.
      if (std::chrono::steady_clock::now() >= deadline && catches_sigterm(pid)) {
        kill(pid, SIGTERM);
        waitpid(pid, &status, 0);
        break;
      }
      usleep(20 * 1000);
    }
  } else {
    waitpid(pid, &status, 0);
  }
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_fd);
  r.err = slurp(err_fd);
  close(out_fd);
  close(err_fd);
  return r;
}

int listening_port(const std::string& log) {
  const std::string marker = "on http://127.0.0.1:";
  for (int i = 0; i < 300; ++i) {
    const std::string text = read_file(log);
    const auto at = text.find(marker);
    if (at != std::string::npos) return std::stoi(text.substr(at + marker.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "no listening address in " << log << ":\n" << read_file(log);
  return 0;
}

namespace {

// Commands spawned by this test process and not yet waited for. A test stops what it started,
// also when an assertion ends it early: the listener below kills what the test left running
// when it ends, and each child dies with the test process (PR_SET_PDEATHSIG) when the process
// itself is killed (a ctest timeout) or exits without its tests' ends.
class Spawned : public ::testing::EmptyTestEventListener {
 public:
  static Spawned& instance() {
    static Spawned* const spawned = [] {
      auto* s = new Spawned;  // gtest's listener list owns it
      ::testing::UnitTest::GetInstance()->listeners().Append(s);
      return s;
    }();
    return *spawned;
  }
  void add(pid_t pid) {
    const std::lock_guard<std::mutex> lock(mutex_);
    pids_.insert(pid);
  }
  void forget(pid_t pid) {
    const std::lock_guard<std::mutex> lock(mutex_);
    pids_.erase(pid);
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    std::set<pid_t> left;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      left.swap(pids_);
    }
    for (const pid_t pid : left) {
      if (waitpid(pid, nullptr, WNOHANG) != 0) continue;  // exited meanwhile: reaped now
      std::fprintf(stderr, "%s.%s left boardkeeper (pid %d) running: killed\n",
                   test.test_suite_name(), test.name(), static_cast<int>(pid));
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

 private:
  std::mutex mutex_;
  std::set<pid_t> pids_;
};

}  // namespace

Reaper::~Reaper() {
  if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  if (pid > 0) Spawned::instance().forget(pid);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> marked_entries(redis::Connection& conn, const std::string& key) {
  std::set<std::string> ids;
  const redis::Reply markers = conn.command({"ZRANGE", key, "0", "-1"});
  for (const auto& m : markers.checked().elements) {
    std::istringstream in(m.as_string());
    for (std::string id; std::getline(in, id, ',');) {
      if (!id.empty() && id != "!") ids.insert(id);
    }
  }
  return ids;
}

int spawn_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  const std::string& log_path) {
  // Everything the child needs is made before the fork: it only calls what is safe after one.
  std::vector<std::string> args = argv, all_env = env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    const auto given = [&](const std::string& g) {
      return var.substr(0, var.find('=') + 1) == g.substr(0, g.find('=') + 1);
    };
    if (std::none_of(env.begin(), env.end(), given)) all_env.emplace_back(var);
  }
  std::vector<char*> argp, envp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  for (auto& e : all_env) envp.push_back(e.data());
  envp.push_back(nullptr);
  Spawned& spawned = Spawned::instance();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Dies with the test process; if that ended before this line, at once.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execve(argp[0], argp.data(), envp.data());
    _exit(127);
  }
  if (pid > 0) spawned.add(pid);
  return pid;
}

bool wait_stopped(int pid, std::chrono::milliseconds deadline, int& code) {
  code = -1;
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WUNTRACED | WNOHANG) == pid) {
      if (WIFSTOPPED(status)) return true;
      Spawned::instance().forget(pid);
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return false;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      ADD_FAILURE() << "pid " << pid << " neither stopped nor ended within " << deadline.count()
                    << " ms";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int spawn_cli(const std::vector<std::string>& args, const std::string& log_path,
              const std::vector<std::string>& env) {
  std::vector<std::string> argv{BK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return spawn_program(argv, env, log_path);
}

int wait_cli(int pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  Spawned::instance().forget(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string psql(const std::string& sql) {
  return psql_at(postgres_url(), sql);
}

std::string psql_at(const std::string& url, const std::string& sql) {
  const std::string file = "/tmp/bk-psql-" + unique_prefix();
  const std::string cmd = "psql -X -q -t -A '" + url + "' -c \"" + sql + "\" > " + file + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(file);
  std::stringstream out;
  out << in.rdbuf();
  std::remove(file.c_str());
  if (rc != 0) ADD_FAILURE() << "psql failed: " << out.str();
  return out.str();
}

std::vector<std::string> keys_with_prefix(redis::Connection& conn, const std::string& prefix) {
  std::vector<std::string> keys;
  for (std::size_t m = 0; m < conn.masters(); ++m) {  // a cluster: every master's keys
    std::string cursor = "0";
    do {
      const redis::Reply r =
          conn.master_command(m, {"SCAN", cursor, "MATCH", prefix + ":*", "COUNT", "1000"});
      cursor = r.at(0).as_string();
      for (const auto& k : r.at(1).elements) keys.push_back(k.as_string());
    } while (cursor != "0");
  }
  return keys;
}

std::map<std::string, std::int64_t> points_of(redis::Connection& conn, const Config& config,
                                              const std::string& board, const std::string& period,
                                              Instant now, cold::ColdStore* cold) {
  service::Leaderboards lb(config, conn, Clock(now), cold);
  std::map<std::string, std::int64_t> out;
  for (const auto& r :
       lb.reads().top_at({lb.resolve(board, period, std::nullopt)}, 0, service::kMaxReadRows)) {
    out[r.member] = r.points;
  }
  return out;
}

}  // namespace bk::test
