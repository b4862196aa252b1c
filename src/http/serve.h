// serve: the HTTP API (src/api) behind HttpServer (http/server.h), with /healthz, /readyz and
// /metrics answered on the server's I/O thread, until SIGTERM or SIGINT (docs/http-api.md,
// docs/operations.md). The command line's `serve` (src/cli) calls it.
#pragma once
#include <cstddef>
#include <string>

#include "config/config.h"
#include "core/time.h"

namespace bk::http {

struct ServeOptions {
  std::string listen;        // HOST:PORT; empty: serve.listen
  std::size_t workers = 32;  // threads running API requests; as many pooled sessions at most
};

// Serves until a stop signal; 0 once stopped (within 5 s of it, whatever the backends do).
// Throws UsageError for a token source that yields none, an address that cannot be bound.
int serve(const Config& config, Clock clock, const ServeOptions& options);

}  // namespace bk::http
