// Rows 17 and 18 of the serve benchmark: what many slow and idle clients cost the others,
// and keep-alive over one connection. Raw sockets on loopback only; every loop is bounded in
// count and time.
#pragma once
#include <sys/types.h>

#include <string>

namespace bk::bench {

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

}  // namespace bk::bench
