// The fixture of the metrics tests (metrics_cli_test: tick's metrics; metrics_ingest_test:
// ingest's /metrics and probes; one binary): board pts on the suite's servers, the real
// binary, a raw HTTP client, a fake Pushgateway, and the independent exposition validator.
#pragma once
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

namespace bk::metrics_test {

using namespace std::chrono_literals;

inline Instant at(const char* text) {
  return *parse_rfc3339(text);
}

inline double now_unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Dates are in 2027 with a 10-year retention: Redis expires keys by its own clock.
inline const char* const kBoards = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 10
    display: 5
    retention: {default: 3650d}
)";

inline test::prom::Exposition parse_ok(const std::string& text) {
  const auto parsed = test::prom::parse(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error << "\n" << text;
  EXPECT_FALSE(text.empty());
  return parsed.exposition;
}

inline double value(const test::prom::Exposition& e, const std::string& name,
                    const test::prom::LabelMap& labels = {}) {
  const auto v = e.value(name, labels);
  EXPECT_TRUE(v.has_value()) << name << " is missing";
  return v.value_or(-1);
}

// A loopback listening socket on a free port.
inline int listen_loopback(int& port) {
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
inline HttpAnswer http(int port, const std::string& request, int timeout_s = 10) {
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

inline HttpAnswer get(int port, const std::string& path, int timeout_s = 10) {
  return http(port, "GET " + path + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
              timeout_s);
}

// The Content-Length of a request head (0 without one).
inline std::size_t content_length(const std::string& head) {
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

}  // namespace bk::metrics_test
