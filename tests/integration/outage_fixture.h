// The fixture of the outage tests (outage_test, outage_probes_test, outage_cuts_test, one
// binary): a redis-server of the test's own, the consumer's config and a model of its
// boards, and the ingest's HTTP probes and metrics.
#pragma once
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

#include <optional>
#include <string>
#include <vector>
#include "harness.h"
#include "hot/keys.h"
#include "lifecycle/ingest.h"
#include "prom_text.h"
#include "redis/error.h"
#include "service/leaderboards.h"

namespace bk::outage_test {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

inline const char* const kBoards = R"(  - name: ing
    periods: [daily]
    max_points: 10000000
    hot_keep: 100000
    display: 10
    retention: {default: 3650d}
)";
inline const char* const kNow = "--now=2027-01-04T12:00:00Z";

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
inline std::string write_config_for(const std::string& prefix, const std::string& url) {
  std::string text = test::config_text(prefix, kBoards);
  const std::string shared = test::redis_url();
  text.replace(text.find(shared), shared.size(), url);
  std::string path = "/tmp/bk-test-" + prefix + "-own.yaml";
  std::ofstream(path) << text;
  // The schema first, as in every deployment (a board's first update asks the cold tier).
  EXPECT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  return path;
}

inline std::int64_t field(const redis::Reply& info, const std::string& name) {
  for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
    if (info.at(i).as_string() == name)
      return info.at(i + 1).is_nil() ? -1 : info.at(i + 1).as_int();
  }
  return -1;
}

// True once the group has read everything and nothing is pending (retrying through
// restarts of the server).
inline bool caught_up(const OwnRedis& server, const std::string& stream,
                      std::chrono::seconds within) {
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

inline bool alive(int pid) {
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

inline void send_all(redis::Connection& c, const std::vector<redis::Args>& commands) {
  for (std::size_t at = 0; at < commands.size(); at += 500) {
    const auto end =
        commands.begin() + static_cast<std::ptrdiff_t>(std::min(commands.size(), at + 500));
    for (const auto& r : c.pipeline({commands.begin() + static_cast<std::ptrdiff_t>(at), end})) {
      r.checked();
    }
  }
}

inline std::map<std::string, std::int64_t> board_points(const std::string& prefix,
                                                        const OwnRedis& s) {
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
inline void wait_until_reading(const OwnRedis& server, const std::string& stream) {
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
inline std::int64_t kill_clients_named(redis::Connection& c, const std::string& name) {
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

// --- probes ---------------------------------------------------------------------------

struct HttpAnswer {
  int status = 0;
  std::string body;
};

inline HttpAnswer get(int port, const std::string& path) {
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

inline int listening_port(const std::string& log) {
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

inline double metric(int port, const std::string& name, const test::prom::LabelMap& labels = {}) {
  const auto parsed = test::prom::parse(get(port, "/metrics").body);
  EXPECT_TRUE(parsed.ok()) << parsed.error;
  const auto v = parsed.exposition.value(name, labels);
  EXPECT_TRUE(v.has_value()) << name << " is missing";
  return v.value_or(-1);
}

// The first time within `within` that `path` answers `status`; nullopt if it never did.
inline std::optional<std::chrono::duration<double>> answers(int port, const std::string& path,
                                                            int status,
                                                            std::chrono::seconds within) {
  const auto start = Steady::now();
  while (Steady::now() - start < within) {
    if (get(port, path).status == status) return Steady::now() - start;
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

inline const test::prom::LabelMap kRedis{{"backend", "redis"}};

}  // namespace bk::outage_test
