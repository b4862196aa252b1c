// The console's pages, compiled in by bk_embed (src/console/*), answered with a strict
// Content-Security-Policy: the page may only run its own script and talk to its own origin.
#include "http/console.h"

#include <string_view>
#include <utility>

#include "core/json.h"
#include "embedded/console.h"

namespace bk::http {
namespace {

struct Asset {
  std::string_view path;
  std::string_view content_type;
  std::string_view body;
};

const Asset kAssets[] = {
    {"/console", "text/html; charset=utf-8", embedded::console::index_html},
    {"/console/", "text/html; charset=utf-8", embedded::console::index_html},
    {"/console/console.css", "text/css; charset=utf-8", embedded::console::console_css},
    {"/console/console.js", "text/javascript; charset=utf-8", embedded::console::console_js},
};

}  // namespace

const char* const kConsolePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::optional<HttpServer::Response> console_answer(const HttpServer::Request& request) {
  for (const Asset& asset : kAssets) {
    if (request.path != asset.path) continue;
    HttpServer::Response r;
    r.headers = {{"Content-Security-Policy", kConsolePolicy}, {"Referrer-Policy", "no-referrer"}};
    if (request.method != "GET" && request.method != "HEAD") {
      r.status = 405;
      r.body = JsonLine()
                   .str("error", "method " + quoted(request.method) +
                                     " is not allowed here (GET, HEAD): the console is read-only")
                   .done() +
               "\n";
      r.headers.emplace_back("Allow", "GET, HEAD");
      return r;
    }
    r.content_type = std::string(asset.content_type);
    r.body = std::string(asset.body);
    return r;
  }
  return std::nullopt;
}

std::vector<std::string> console_paths() {
  std::vector<std::string> paths;
  for (const Asset& asset : kAssets) paths.emplace_back(asset.path);
  return paths;
}

}  // namespace bk::http
