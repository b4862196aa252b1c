// Clients of the serve benchmark: what many slow and idle clients cost the others (row 17),
// keep-alive over one connection (row 18), and keep-alive POST load (rows 24-26). Raw sockets
// on loopback only; every loop is bounded in count and time.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bk::bench {

// The p-th quantile (0..1) of `v`, nearest rank; 0 when `v` is empty.
double percentile(std::vector<double> v, double p);

struct SlowClientsFigures {
  int slow = 0;             // connections sending one header byte a second
  int idle = 0;             // keep-alive connections that sent one request, then nothing
  int slow_reconnects = 0;  // slow connections the server closed (head deadline) and made again
  double quiet_readyz_p99_ms = 0;  // /readyz from another client before the slow ones came
  double quiet_top_p99_ms = 0;     // the top page likewise
  double readyz_p99_ms = 0;        // /readyz while they were all connected
  double top_p99_ms = 0;           // the top page likewise
  double rss_mib = 0;              // serve's resident memory with all of them connected
  double sigterm_exit_s = 0;       // from SIGTERM (all still connected) to serve's exit
  int exit_status = -1;            // serve's exit code after SIGTERM
};

// Holds `slow` + `idle` connections to 127.0.0.1:`port` for `seconds`, measuring `/readyz`
// and `top_target` from one more client meanwhile, then sends SIGTERM to `serve` (pid) with
// all of them still connected and times its exit. serve is gone afterwards.
SlowClientsFigures slow_clients(int port, pid_t serve, const std::string& top_target, int slow,
                                int idle, int seconds);

struct KeepAliveFigures {
  int requests = 0;
  int connections = 0;  // TCP connections the client needed (1 when keep-alive holds)
  double seconds = 0;
};

// `requests` GETs of `target` over one connection, one after the other; a new connection
// is made (and counted) only when the server closed the old one.
KeepAliveFigures one_connection(int port, const std::string& target, int requests);

// One POST of a load: its target and JSON body.
struct PostRequest {
  std::string target;
  std::string body;
};

struct PostLoad {
  int connections = 16;
  int seconds = 5;
  std::int64_t max_requests = 0;  // stop after this many requests (0: only the clock stops)
  std::string token;              // sent as Authorization: Bearer
  // The i-th request of the load (i counts over all connections, each i asked once).
  std::function<PostRequest(std::int64_t i)> request;
  // Whether the i-th answer (a 200's body) is what it should be; the load fails otherwise.
  std::function<bool(std::int64_t i, const std::string& body)> check;
};

struct PostLoadFigures {
  std::int64_t requests = 0;
  double seconds = 0;
  double rps = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

// `load.connections` keep-alive connections to 127.0.0.1:`port`, each POSTing (with
// Content-Type: application/json) one request after the other for `load.seconds` or until
// `load.max_requests` were sent; every answer must be a 200 that `load.check` accepts.
PostLoadFigures post_load(int port, const PostLoad& load);

}  // namespace bk::bench
