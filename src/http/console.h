// The read-only web console at /console: static pages compiled into the binary that read the
// public /v1 API from the browser. Served by `serve` unless serve.console is false.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "http/server.h"

namespace bk::http {

// The console's answer to a request for `path` (GET or HEAD; another method is a 405), or
// nullopt when the path is none of the console's. Never blocks: answered on the I/O thread.
std::optional<HttpServer::Response> console_answer(const HttpServer::Request& request);

// Every path console_answer serves: /console, /console/ and each asset.
std::vector<std::string> console_paths();

// The Content-Security-Policy every console answer carries: scripts, styles and requests
// from this origin only, no inline script, no eval, no frames, no plugins.
extern const char* const kConsolePolicy;

}  // namespace bk::http
