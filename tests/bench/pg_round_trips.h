// Counts the PostgreSQL round trips of the connections made through it: a loopback TCP relay in
// front of the server that counts the ReadyForQuery messages the server sends. The server sends
// one at the end of every exchange a client waits for (a simple query; an extended-protocol
// Sync, which ends a prepared statement's preparation or execution) and one when a connection
// is ready, so the count between two instants is the number of round trips made meanwhile,
// whatever statements, transactions or libpq calls made them (bench row 28).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bk_bench {

class PgRoundTrips {
 public:
  // Relays to the server of `url` (a libpq connection string, URL or key=value, naming a TCP
  // host). Listens on 127.0.0.1 at a free port.
  explicit PgRoundTrips(const std::string& url);
  ~PgRoundTrips();
  PgRoundTrips(const PgRoundTrips&) = delete;
  PgRoundTrips& operator=(const PgRoundTrips&) = delete;

  // `url` pointed at the relay (key=value form; TLS and GSS encryption off, so that the relay
  // reads the protocol's messages).
  const std::string& url() const { return relayed_url_; }
  // ReadyForQuery messages relayed so far, over every connection.
  std::int64_t count() const { return ready_.load(); }

 private:
  std::string host_, port_;
  std::string relayed_url_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> ready_{0};
  std::mutex threads_mutex_;
  std::vector<std::thread> relays_;
  std::thread acceptor_;

  void accept_loop();
  void relay(int client);
};

}  // namespace bk_bench
