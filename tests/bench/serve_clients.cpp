// Slow, idle and keep-alive clients of `serve` over raw sockets (see serve_clients.h).
#include "serve_clients.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace bk::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

// A blocking connection to 127.0.0.1:port (-1 when refused). `timeout`: for each send and
// receive.
int dial(int port, std::chrono::milliseconds timeout = std::chrono::seconds{10}) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one answer (head and a Content-Length body); its status, or 0 when the connection
// ended or timed out first. `pending` keeps bytes read past the answer; `body`, when given,
// gets the answer's body.
int read_answer(int fd, std::string& pending, std::string* body = nullptr) {
  std::size_t head_end = std::string::npos;
  char buf[16384];
  for (;;) {
    head_end = pending.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      std::string head = pending.substr(0, head_end);
      std::transform(head.begin(), head.end(), head.begin(),
                     [](char c) { return static_cast<char>(std::tolower(c)); });
      const auto cl = head.find("\r\ncontent-length:");
      const std::size_t length = cl == std::string::npos ? 0 : std::stoul(head.substr(cl + 17));
      if (pending.size() >= head_end + 4 + length) {
        const int status = std::stoi(pending.substr(9, 3));
        if (body != nullptr) *body = pending.substr(head_end + 4, length);
        pending.erase(0, head_end + 4 + length);
        return status;
      }
    }
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return 0;
    pending.append(buf, static_cast<std::size_t>(n));
  }
}

std::string get_request(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

// p99 of `count` GETs of `target` over one keep-alive connection, one at a time; each must
// answer 200 within 10 s.
double p99_of(int port, const std::string& target, int count) {
  const int fd = dial(port);
  if (fd < 0) fail("cannot connect to serve on port " + std::to_string(port));
  std::vector<double> ms;
  std::string pending;
  for (int i = 0; i < count; ++i) {
    const auto t0 = SteadyClock::now();
    if (!send_all(fd, get_request(target))) fail("cannot send " + target);
    const int status = read_answer(fd, pending);
    if (status != 200) {
      close(fd);
      fail("GET " + target + " answered " + std::to_string(status) + " under slow clients");
    }
    ms.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
  }
  close(fd);
  return percentile(ms, 0.99);
}

double rss_mib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// The slow connections: each sends the next byte of a request head once a second and is
// made again when the server closes it (its head deadline), until `stop`.
class SlowSenders {
 public:
  SlowSenders(int port, int count, const std::string& target)
      : port_(port),
        head_("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "),
        fds_(static_cast<std::size_t>(count), -1),
        sent_(static_cast<std::size_t>(count), 0) {
    for (auto& fd : fds_) fd = dial(port_, std::chrono::milliseconds{200});
  }
  ~SlowSenders() {
    for (const int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  SlowSenders(const SlowSenders&) = delete;
  SlowSenders& operator=(const SlowSenders&) = delete;

  // One round: a byte on every connection (spread over about a second).
  void round() {
    const auto started = SteadyClock::now();
    for (std::size_t i = 0; i < fds_.size(); ++i) {
      std::size_t& at = sent_[i];
      const std::string next = at < head_.size() ? head_.substr(at, 1) : std::string("a");
      if (fds_[i] < 0 || !send_all(fds_[i], next)) {
        if (fds_[i] >= 0) close(fds_[i]);
        fds_[i] = dial(port_, std::chrono::milliseconds{200});
        ++reconnects_;
        at = 0;
        continue;
      }
      ++at;  // then a header value that never ends: the head stays unfinished
    }
    const auto spent = SteadyClock::now() - started;
    if (spent < std::chrono::seconds{1})
      std::this_thread::sleep_for(std::chrono::seconds{1} - spent);
  }
  int connected() const {
    return static_cast<int>(
        std::count_if(fds_.begin(), fds_.end(), [](int fd) { return fd >= 0; }));
  }
  int reconnects() const { return reconnects_; }

 private:
  int port_;
  std::string head_;
  std::vector<int> fds_;
  std::vector<std::size_t> sent_;
  int reconnects_ = 0;
};

std::string post_request(const PostRequest& r, const std::string& token) {
  return "POST " + r.target +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Authorization: Bearer " +
         token + "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n\r\n" + r.body;
}

// What the connections of a post_load share: the next request's index, the deadline, the
// latencies and the first failure (which stops them all).
struct LoadState {
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};
  SteadyClock::time_point until;
  std::mutex mutex;
  std::vector<double> ms;
  std::string failure;

  void fail_with(const std::string& what) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!failed.exchange(true)) failure = what;
  }
};

// One connection of a post_load: requests until the clock, the count or a failure stops it.
void post_loop(int port, const PostLoad& load, LoadState& state) {
  const int fd = dial(port);
  if (fd < 0) return state.fail_with("cannot connect to serve on port " + std::to_string(port));
  std::vector<double> ms;
  std::string pending, body;
  while (!state.failed.load() && SteadyClock::now() < state.until) {
    const std::int64_t i = state.next.fetch_add(1);
    if (load.max_requests > 0 && i >= load.max_requests) break;
    const PostRequest r = load.request(i);
    const auto t0 = SteadyClock::now();
    const int status =
        send_all(fd, post_request(r, load.token)) ? read_answer(fd, pending, &body) : 0;
    ms.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
    if (status != 200 || !load.check(i, body)) {
      state.fail_with("POST " + r.target + " answered " + std::to_string(status) + ": " +
                      body.substr(0, 300));
    }
  }
  close(fd);
  const std::lock_guard<std::mutex> lock(state.mutex);
  state.ms.insert(state.ms.end(), ms.begin(), ms.end());
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1,
                    static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

PostLoadFigures post_load(int port, const PostLoad& load) {
  LoadState state;
  const auto t0 = SteadyClock::now();
  state.until = t0 + std::chrono::seconds{load.seconds};
  std::vector<std::thread> threads;
  for (int c = 0; c < load.connections; ++c) {
    threads.emplace_back([&] { post_loop(port, load, state); });
  }
  for (auto& t : threads) t.join();
  if (state.failed.load()) fail(state.failure);
  PostLoadFigures f;
  f.seconds = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  f.requests = static_cast<std::int64_t>(state.ms.size());
  f.rps = static_cast<double>(f.requests) / f.seconds;
  f.p50_ms = percentile(state.ms, 0.5);
  f.p99_ms = percentile(state.ms, 0.99);
  return f;
}

SlowClientsFigures slow_clients(int port, pid_t serve, const std::string& top_target, int slow,
                                int idle, int seconds) {
  SlowClientsFigures f;
  f.quiet_readyz_p99_ms = p99_of(port, "/readyz", 200);
  f.quiet_top_p99_ms = p99_of(port, top_target, 200);

  // Idle keep-alive clients: one answered request each, then silence.
  std::vector<int> idle_fds;
  for (int i = 0; i < idle; ++i) {
    const int fd = dial(port);
    std::string pending;
    if (fd < 0 || !send_all(fd, get_request("/healthz")) || read_answer(fd, pending) != 200) {
      if (fd >= 0) close(fd);
      fail("idle client " + std::to_string(i) + " was not answered");
    }
    idle_fds.push_back(fd);
  }
  f.idle = idle;

  std::atomic<bool> stop{false};
  SlowSenders senders(port, slow, top_target);
  f.slow = senders.connected();
  if (f.slow < slow) fail("only " + std::to_string(f.slow) + " of the slow clients could connect");
  std::thread drip([&] {
    const auto until = SteadyClock::now() + std::chrono::seconds{seconds + 60};
    while (!stop.load() && SteadyClock::now() < until) senders.round();
  });
  std::this_thread::sleep_for(std::chrono::seconds{1});
  f.readyz_p99_ms = p99_of(port, "/readyz", 200);
  f.top_p99_ms = p99_of(port, top_target, 200);
  f.rss_mib = rss_mib(serve);
  const auto left = std::chrono::seconds{seconds} - std::chrono::seconds{1};
  if (left > std::chrono::seconds{0}) std::this_thread::sleep_for(left);

  // SIGTERM with every client still connected.
  const auto t0 = SteadyClock::now();
  kill(serve, SIGTERM);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(serve, &status, WNOHANG)) == 0 &&
         SteadyClock::now() - t0 < std::chrono::seconds{30}) {
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  f.sigterm_exit_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  if (done == 0) {
    kill(serve, SIGKILL);
    waitpid(serve, &status, 0);
  }
  f.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  stop.store(true);
  drip.join();
  f.slow_reconnects = senders.reconnects();
  for (const int fd : idle_fds) close(fd);
  return f;
}

KeepAliveFigures one_connection(int port, const std::string& target, int requests) {
  KeepAliveFigures f;
  int fd = dial(port);
  if (fd < 0) fail("cannot connect to serve on port " + std::to_string(port));
  f.connections = 1;
  std::string pending;
  const auto t0 = SteadyClock::now();
  for (int i = 0; i < requests; ++i) {
    if (send_all(fd, get_request(target))) {
      const int status = read_answer(fd, pending);
      if (status == 200) {
        ++f.requests;
        continue;
      }
      if (status != 0) fail("GET " + target + " answered " + std::to_string(status));
    }
    // The server closed the connection: a new one, counted.
    close(fd);
    pending.clear();
    fd = dial(port);
    if (fd < 0 || ++f.connections > requests) fail("serve stopped answering");
    --i;
  }
  f.seconds = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  close(fd);
  return f;
}

}  // namespace bk::bench
