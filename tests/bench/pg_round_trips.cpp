// The round-trip counting relay of bench row 28 (see pg_round_trips.h).
#include "pg_round_trips.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace bk_bench {

namespace {

// Every wait of the relay wakes this often to see whether it should stop.
constexpr int kPollMs = 100;

std::string quoted(const std::string& value) {
  std::string out = "'";
  for (const char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

int connect_to(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) return -1;
  const std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, freeaddrinfo);
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) return fd;
    close(fd);
  }
  return -1;
}

bool send_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t sent = send(fd, data, n, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    n -= static_cast<std::size_t>(sent);
  }
  return true;
}

// Reads the server's side of the protocol as it passes: after the start-up (the client's
// start-up message has no type byte; every server message has one), each message is a type
// byte and a 4-byte big-endian length that counts itself and the body.
class ServerMessages {
 public:
  // Returns the ReadyForQuery ('Z') messages that begin in `data`.
  std::int64_t feed(const char* data, std::size_t n) {
    std::int64_t ready = 0;
    for (std::size_t i = 0; i < n;) {
      if (skip_ > 0) {
        const std::size_t take = std::min<std::size_t>(skip_, n - i);
        skip_ -= take;
        i += take;
        continue;
      }
      header_[have_++] = static_cast<unsigned char>(data[i++]);
      if (have_ < header_.size()) continue;
      if (header_[0] == 'Z') ++ready;
      const std::uint32_t length = (std::uint32_t{header_[1]} << 24) |
                                   (std::uint32_t{header_[2]} << 16) |
                                   (std::uint32_t{header_[3]} << 8) | std::uint32_t{header_[4]};
      skip_ = length >= 4 ? length - 4 : 0;
      have_ = 0;
    }
    return ready;
  }

 private:
  std::array<unsigned char, 5> header_{};
  std::size_t have_ = 0;
  std::size_t skip_ = 0;
};

}  // namespace

PgRoundTrips::PgRoundTrips(const std::string& url) {
  char* error = nullptr;
  const std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
      PQconninfoParse(url.c_str(), &error), PQconninfoFree);
  if (!options) {
    PQfreemem(error);
    throw std::runtime_error("the round-trip relay cannot read the PostgreSQL connection string");
  }
  std::string rest;
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val == nullptr || *o->val == '\0') continue;
    const std::string key = o->keyword;
    if (key == "host" || key == "hostaddr") {
      host_ = o->val;
    } else if (key == "port") {
      port_ = o->val;
    } else if (key == "dbname" || key == "user" || key == "password") {
      rest += " " + key + "=" + quoted(o->val);
    }
  }
  if (host_.empty() || host_[0] == '/') {
    throw std::runtime_error("the round-trip relay needs a TCP host in BK_TEST_POSTGRES_URL");
  }
  if (port_.empty()) port_ = "5432";

  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(listen_fd_, 16) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (listen_fd_ >= 0) close(listen_fd_);
    throw std::runtime_error("the round-trip relay found no loopback port");
  }
  relayed_url_ = "host=127.0.0.1 port=" + std::to_string(ntohs(addr.sin_port)) + rest +
                 " sslmode=disable gssencmode=disable";
  acceptor_ = std::thread([this] { accept_loop(); });
}

PgRoundTrips::~PgRoundTrips() {
  stop_ = true;
  acceptor_.join();
  for (auto& t : relays_) t.join();
  close(listen_fd_);
}

void PgRoundTrips::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, kPollMs) <= 0) continue;
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    const std::lock_guard<std::mutex> lock(threads_mutex_);
    relays_.emplace_back([this, client] { relay(client); });
  }
}

// Copies bytes both ways until either side closes (or the relay stops), counting the
// server's ReadyForQuery messages.
void PgRoundTrips::relay(int client) {
  const int server = connect_to(host_, port_);
  ServerMessages messages;
  std::array<char, 65536> buf{};
  while (server >= 0 && !stop_) {
    std::array<pollfd, 2> p{pollfd{client, POLLIN, 0}, pollfd{server, POLLIN, 0}};
    if (poll(p.data(), p.size(), kPollMs) <= 0) continue;
    if (p[0].revents != 0) {
      const ssize_t n = recv(client, buf.data(), buf.size(), 0);
      if (n <= 0 || !send_all(server, buf.data(), static_cast<std::size_t>(n))) break;
    }
    if (p[1].revents != 0) {
      const ssize_t n = recv(server, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      ready_ += messages.feed(buf.data(), static_cast<std::size_t>(n));
      if (!send_all(client, buf.data(), static_cast<std::size_t>(n))) break;
    }
  }
  if (server >= 0) close(server);
  close(client);
}

}  // namespace bk_bench
