// The HTTP read API of `serve` (docs/http-api.md): routes /v1 requests to the service's reads
// (and admin routes to its moderation) and renders JSON. It knows nothing of Redis,
// PostgreSQL or sockets: the server hands it a request and a service::Leaderboards of the
// worker's own.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/cursor.h"
#include "api/rate_limits.h"
#include "api/routes.h"
#include "api/tokens.h"
#include "core/error.h"
#include "service/leaderboards.h"

namespace bk::api {

struct Request {
  std::string method;             // GET, HEAD, POST, or PUT and DELETE (admin routes)
  std::string target;             // path and query as sent (still percent-encoded)
  std::string authorization;      // the Authorization header, "" when absent
  std::string body;               // POST, PUT
  std::string idempotency_key{};  // the Idempotency-Key header as sent, "" when absent
  std::string content_type{};     // the Content-Type header, "" when absent
};

struct Response {
  int status = 200;
  std::string body;   // JSON
  std::string route;  // for metrics: "top", "member", "members", "around", "periods", "other"
  // Headers the answer needs beyond the server's own (WWW-Authenticate on 401, Retry-After
  // on 503, ...), as name and value.
  std::vector<std::pair<std::string, std::string>> headers{};
  bool admin = false;  // an admin route's answer: never cached
  // A score write's outcome (for metrics): "applied", "duplicate", "refused", "unavailable"
  // or "failed", with the refusal's reason (service::refusal_label); "" for other routes
  // and for writes refused before they reached the service (bad body, token).
  std::string outcome{};
  std::string reason{};
  std::vector<std::pair<std::string, std::string>> outcomes{};  // a batch's, one per event
  // A 503 because another operation held a lock too long (BusyError), not because a server
  // is unreachable: the connections are fine, so it is not retried on fresh ones.
  bool busy = false;
  // A 503 because this server took the request but did not answer in time (hung): the
  // request's deadline is spent, so it is not retried on fresh connections either.
  Backend hung = Backend::none;
};

// RateLimit-Limit, -Remaining and -Reset of `v` (IETF httpapi draft), appended to `headers`.
void add_limit_headers(const Verdict& v, Headers& headers);

inline constexpr std::int64_t kMaxLimit = 1000;  // rows of one page
inline constexpr std::int64_t kMaxIds = 1000;    // members of one members request
inline constexpr std::int64_t kMaxK = 500;       // neighbours each side

class Api {
 public:
  // `tokens`: bearer tokens that may read; empty: no token needed. `cursor_key`: the
  // deployment's cursor key (at least kMinCursorKeyBytes), asked for when a cursor is first
  // made or checked and kept once given (see CursorKey). `admin_tokens`: bearer tokens that
  // may use the admin routes (api/admin.h) and read; empty: the admin routes answer 403.
  // `write_tokens`: bearer tokens that may write scores (api/write.h) on the boards their
  // scope covers, and nothing else; empty: writes are off (their route answers 404).
  Api(std::vector<std::string> tokens, std::function<std::string()> cursor_key,
      std::vector<std::string> admin_tokens = {}, std::vector<WriteToken> write_tokens = {});
  // The same with the tokens of `tokens`, asked for each request: a reload (TokenStore::
  // replace) holds from the next request on. `limits` (none: no limits): taken from by
  // refuse_before_body, shown in the RateLimit-* headers of handle's answers.
  Api(std::function<std::string()> cursor_key, std::shared_ptr<const TokenStore> tokens,
      std::shared_ptr<RateLimits> limits = nullptr);

  // Any path: /v1/... is answered here; anything else is a 404. Errors are {"error": ...}
  // with 400, 401 (WWW-Authenticate), 403 (an admin route without an admin token, a write
  // outside the write token's scope), 404 (also a write while writes are off), 405
  // (Allow), 413 (an admin body over 4 KiB) or 503 (Retry-After; Redis or
  // PostgreSQL unreachable: logged with its cause); an unexpected failure is thrown (the
  // server answers 500 without its text).
  Response handle(const Request& request, service::Leaderboards& boards) const;

  // Whether this Authorization header carries one of the tokens (always, without tokens):
  // `Bearer <token>`, the scheme in any case, one or more spaces after it.
  bool authorized(const std::string& authorization) const;

  // The 503 of a backend that cannot be reached (`e.transient()`): {"error": "Redis is
  // unreachable"} (or PostgreSQL), Retry-After: 1. The body names the backend's kind, never
  // its address (handle() logs e.what(); a server using this for its own failures logs it).
  static Response unavailable(const Error& e, std::string route);

  // What a request is refused with before its body is read (a server asks once the head has
  // arrived, so that a refused request holds no body): a 401 for a /v1 request without a
  // good token (an admin route: 401 or 403), a 405 for a POST, PUT or DELETE where the route
  // takes none, a 429 (Retry-After, RateLimit-*) beyond the rate limit of its route's class
  // (taking one request from its buckets otherwise: call it once a request); nullopt: read
  // the body. Never blocks (the limits hold a mutex for a few steps).
  std::optional<Response> refuse_before_body(const Request& head) const;

  // Whose share of what clients may hold (serve.bodies_in_flight_per_token_mb, ...) a request
  // takes, from its head: the identity of the token it was let in with (Caller::id, never
  // the token itself) when its route needs one; nullopt when it needs none (reads of an open
  // API, paths outside /v1) or the token is not ours: the client's address then.
  std::optional<std::uint64_t> token_share(const Request& head) const;

  // Asks for the cursor key now (at start), so that a backend outage later does not stop
  // cursors; false, with the reason logged, when it cannot be had yet (asked again when a
  // cursor is next made or checked).
  bool fetch_cursor_key() const;

 private:
  // Why the Authorization header may not use the route `m` names (its access, and for a
  // write its board); nullopt: it may. `who`: whose token it carries (kind none: no token of
  // ours), valid only with the snapshot `tokens`.
  std::optional<Response> refuse_access(const Matched& m, const std::string& authorization,
                                        const TokenSnapshot& tokens, Caller& who) const;
  std::optional<Response> refuse_write(const Matched& m, const Caller& who) const;
  // The answer of handle; `limit`: the state of the request's rate limit, when it has one
  // (for the RateLimit-* headers).
  Response respond(const Request& request, service::Leaderboards& boards,
                   std::optional<Verdict>& limit) const;
  // The 429 of a route whose limit `who` spent, taking one request otherwise.
  std::optional<Response> refuse_over_limit(const Matched& m, const Caller& who) const;
  // The state of the limit of `who` on the route `m`, nothing taken; nullopt: none.
  std::optional<Verdict> look_limit(const Matched& m, const Caller& who) const;
  // A batch's cost, once its events are read and before any is applied (docs/http-api.md,
  // "Rate limits"): one write request per event from the token `who`'s bucket, and one per
  // event of each member from its write_per_member bucket, all taken or none. Refused: a 429
  // (Retry-After: when the buckets could pay it), or a 413 when the batch asks a bucket for
  // more than its burst. `limit`: the token's write limit after it (or the refusal's), for
  // the RateLimit-* headers.
  void pay_for_batch(std::uint64_t who, const std::vector<service::Update>& events,
                     std::optional<Verdict>& limit) const;

  std::shared_ptr<const TokenStore> tokens_;
  std::shared_ptr<RateLimits> limits_;
  std::unique_ptr<CursorKey> cursor_key_;
};

}  // namespace bk::api
