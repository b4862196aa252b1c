// A PostgreSQL server of the test's own, for tests that freeze it (SIGSTOP: a server that
// takes connections and requests but never answers, as a stalled disk or a partition looks
// to a client): never the shared one, which the other tests use at the same time.
#pragma once
#include <string>

namespace bk::test {

class PostgresServer {
 public:
  // initdb in a temp dir (as the postgres user when run as root: PostgreSQL refuses root),
  // started on a free loopback port with a database "boards". Fails the test when it cannot.
  PostgresServer();
  // A streaming replica of `primary` (pg_basebackup -R), a hot standby on a port of its own.
  struct ReplicaOf {
    const PostgresServer& primary;
  };
  explicit PostgresServer(ReplicaOf replica);
  ~PostgresServer();  // stops it (thawed first) and removes its directory
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  std::string url() const;
  int port() const { return port_; }
  // SIGSTOP / SIGCONT of the postmaster and every process it started.
  void freeze();
  void thaw();
  // Stops it (it refuses connections) and starts it again on the same port.
  void stop();
  void start();
  // One SQL statement with psql; its output.
  std::string sql(const std::string& statement) const;

 private:
  std::string dir_;
  std::string bin_;
  int port_ = 0;
  int postmaster_ = -1;
  std::string options_;  // the server's command-line settings

  void signal_all(int sig) const;
  bool start_server();
};

}  // namespace bk::test
