// The HTTP read API of `serve` (PRODUCT.md, "HTTP read API"): routes /v1 requests to
// service reads and renders JSON. It knows nothing of Redis, PostgreSQL or sockets: the
// server hands it a request and a service::Reads of the worker's own.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "service/reads.h"

namespace bk::api {

struct Request {
  std::string method;         // GET, HEAD or POST
  std::string target;         // path and query as sent (still percent-encoded)
  std::string authorization;  // the Authorization header, "" when absent
  std::string body;           // POST
};

struct Response {
  int status = 200;
  std::string body;   // JSON
  std::string route;  // for metrics: "top", "member", "members", "around", "periods", "other"
  // Headers the answer needs beyond the server's own (WWW-Authenticate on 401, Retry-After
  // on 503, ...), as name and value.
  std::vector<std::pair<std::string, std::string>> headers{};
};

inline constexpr std::int64_t kMaxLimit = 1000;  // rows of one page
inline constexpr std::int64_t kMaxIds = 1000;    // members of one members request
inline constexpr std::int64_t kMaxK = 500;       // neighbours each side

class Api {
 public:
  // `tokens`: bearer tokens that may read; empty: no token needed.
  explicit Api(std::vector<std::string> tokens);

  // Any path: /v1/... is answered here; anything else is a 404. Errors are {"error": ...}
  // with 400, 401, 404, 405 or 503 (Redis or PostgreSQL unreachable); an unexpected
  // failure is a 500 whose text is not shown to the client.
  Response handle(const Request& request, service::Reads& reads) const;

  // Whether this Authorization header carries one of the tokens (always, without tokens).
  bool authorized(const std::string& authorization) const;

 private:
  std::vector<std::string> tokens_;
};

}  // namespace bk::api
