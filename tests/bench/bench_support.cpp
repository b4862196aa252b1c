// The benchmark's plumbing (tests/bench/bench.h): formatting, the child-process launcher,
// a Redis replica for a phase, and the run's set-up and clean-up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench.h"
#include "redis/url.h"

namespace bk_bench {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string env_or_fail(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    fail(std::string(name) + " is not set (tests/bench/run.sh sets it)");
  return v;
}

std::string fmt_int(std::int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(i, v.size() - 1)];
}

ChildRun run_child(const std::string& program, const std::vector<std::string>& args,
                   const std::string& log_path, const std::string& name, bool utc) {
  const std::string report = log_path + ".rusage";
  std::vector<std::string> launcher = {"bk_bench", "--launch", report, log_path};
  launcher.push_back(utc ? "utc" : "-");
  launcher.push_back(program);
  launcher.insert(launcher.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : launcher) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::remove(report.c_str());
  const pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int launched = 0;
  if (waitpid(pid, &launched, 0) != pid) fail("waitpid failed");
  int status = -1;
  double seconds = 0;
  long maxrss_kib = 0;
  std::ifstream in(report);
  if (!(in >> status >> seconds >> maxrss_kib) || !WIFEXITED(launched) ||
      WEXITSTATUS(launched) != 0) {
    fail("bk_bench --launch " + program + " failed (status " + std::to_string(launched) + ")");
  }
  ChildRun out;
  out.seconds = seconds;
  out.peak_rss_mib = static_cast<double>(maxrss_kib) / 1024.0;  // ru_maxrss is in KiB
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream log(log_path);
    std::stringstream text;
    text << log.rdbuf();
    std::string command;
    for (const auto& a : args) command += " " + a;
    fail(name + command + " failed (status " + std::to_string(status) + "):\n" + text.str());
  }
  return out;
}

int launch(int argc, char** argv) {
  if (argc < 6) return 2;
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    const int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    if (std::strcmp(argv[4], "utc") == 0) setenv("TZ", "UTC", 1);
    execvp(argv[5], argv + 5);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) return 1;
  const double seconds = seconds_since(t0);
  std::FILE* report = std::fopen(argv[2], "w");
  if (report == nullptr) return 1;
  std::fprintf(report, "%d %.6f %ld\n", status, seconds, static_cast<long>(ru.ru_maxrss));
  return std::fclose(report) == 0 ? 0 : 1;
}

ChildRun run_binary(const std::vector<std::string>& args, const std::string& log_path) {
  return run_child(BK_BINARY, args, log_path, "boardkeeper");
}

Replica::Replica(const std::string& host, int port, const std::string& dir) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    fail("no free port for a replica");
  }
  close(fd);
  const std::string own_port = std::to_string(ntohs(addr.sin_port));
  std::filesystem::create_directories(dir);
  pid_ = fork();
  if (pid_ == 0) {
    const std::string master_port = std::to_string(port), log = dir + "/redis.log";
    execlp("redis-server", "redis-server", "--port", own_port.c_str(), "--bind", "127.0.0.1",
           "--dir", dir.c_str(), "--save", "", "--appendonly", "no", "--replicaof", host.c_str(),
           master_port.c_str(), "--logfile", log.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bk::redis::Options o = bk::redis::parse_url("redis://127.0.0.1:" + own_port);
  for (int i = 0; i < 200; ++i) {
    try {
      bk::redis::Connection c(o);
      const std::string info = c.command({"INFO", "replication"}).as_string();
      if (info.find("master_link_status:up") != std::string::npos) return;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop();
  fail("the replica did not sync with its master (see " + dir + "/redis.log)");
}

void Replica::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Bench::Bench() {
  char tmpl[] = "/tmp/bk_bench.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) fail("mkdtemp failed");
  dir = tmpl;
  const auto now_ms = bk::to_epoch_ms(
      bk::Instant(std::chrono::time_point_cast<bk::Millis>(std::chrono::system_clock::now())));
  const std::int64_t day_ms = 86'400'000;
  day = bk::from_epoch_ms((now_ms / day_ms - 2) * day_ms);
}

std::string Bench::at(std::int64_t offset_ms) const {
  return bk::format_rfc3339(day + bk::Millis{offset_ms});
}

std::string Bench::config_text(const std::string& key_prefix, const std::string& boards) const {
  return "redis:\n  url: " + redis_url + "\n  key_prefix: " + key_prefix +
         "\npostgres:\n  url: " + pg_url + "\n  schema: " + prefix + "\nboards:\n" + boards;
}

std::string Bench::write_config(const std::string& name, const std::string& text) const {
  std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << text;
  return path;
}

std::string Bench::board_yaml(const std::string& name, const std::string& periods,
                              std::int64_t keep) {
  return "  - name: " + name + "\n    periods: " + periods +
         "\n    timezone: UTC\n    order: desc\n    tie_break: earliest\n    update: increment\n"
         "    time_resolution: ms\n    min_points: 0\n    max_points: 1000000\n    hot_keep: " +
         std::to_string(keep) +
         "\n    display: 10\n    max_clock_skew: 1h\n    archive:\n      grace: 1m\n    "
         "retention:\n      default: 3650d\n";
}

void Bench::cleanup() {
  RawRedis raw(redis_url);
  std::string cursor = "0";
  do {
    const auto r = raw.command({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "10000"});
    cursor.assign(r->element[0]->str, r->element[0]->len);
    for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
      raw.command(
          {"UNLINK", std::string(r->element[1]->element[i]->str, r->element[1]->element[i]->len)});
    }
  } while (cursor != "0");
  RawPg(pg_url).exec("DROP SCHEMA IF EXISTS " + prefix + " CASCADE");
  std::string rm = "rm -rf " + dir;
  if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir.c_str());
}

std::string machine() {
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpu, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return model + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " cores";
}

// The peer's redis-rank version, from its installed package.json.
std::string peer_version(const std::string& peer_dir) {
  std::ifstream in(peer_dir + "/node_modules/redis-rank/package.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto key = text.find("\"version\"");
  const auto open = text.find('"', text.find(':', key) + 1);
  if (key == std::string::npos || open == std::string::npos) return "?";
  return text.substr(open + 1, text.find('"', open + 1) - open - 1);
}

// "evalsha 15.3, xreadgroup 0.8 (nested: zadd 4.5, ...)": usec per event by command.
std::string breakdown(const Bench::ServerUse& use, std::int64_t events) {
  const auto list = [&](const std::vector<std::pair<std::string, double>>& commands) {
    std::string out;
    for (std::size_t i = 0; i < commands.size() && i < 5; ++i) {
      if (i > 0) out += ", ";
      out +=
          commands[i].first + " " + fmt("%.2f", commands[i].second / static_cast<double>(events));
    }
    return out;
  };
  std::string out = list(use.top_level);
  if (!use.nested.empty()) out += " (nested, counted once: " + list(use.nested) + ")";
  return out;
}

std::string breakdown(const Bench::Side& side) {
  return breakdown(side.server, side.events);
}

void row(const std::string& what, const std::string& ours, const std::string& base,
         const std::string& ratio, const std::string& target) {
  std::printf("%-44s %-22s %-34s %-8s %s\n", what.c_str(), ours.c_str(), base.c_str(),
              ratio.c_str(), target.c_str());
}

}  // namespace bk_bench
