// serve's answers: the probes and metrics on the server's I/O thread, the API (src/api) on a
// worker with a session from the pool, within the request's deadline.
#pragma once
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "api/api.h"
#include "cold/call_deadline.h"
#include "core/json.h"
#include "core/redact.h"
#include "http/console.h"
#include "http/metrics_io.h"
#include "http/readiness.h"
#include "http/serve_metrics.h"
#include "http/server.h"
#include "http/sessions.h"

namespace bk::http {

// An answer and its route (for metrics).
struct Answered {
  HttpServer::Response response;
  std::string route;
  std::string outcome{};  // a score write's (api::Response::outcome) and its reason
  std::string reason{};
  std::vector<std::pair<std::string, std::string>> outcomes{};  // a batch's, per event
};

inline HttpServer::Response json(int status, std::string body) {
  return {status, "application/json", std::move(body) + "\n"};
}

// Whose share of bodies and requests in progress a request takes (HttpServer::Options::
// share_key): "token <identity in hex>" for a request let in with one of serve's tokens
// (api::Api::token_share: the identity rate limits count by, never the token, which is a
// secret and would live in the server's map as long as the request); else "", the client's
// address (its /64 for IPv6: http/admission.h).
inline std::string share_key(const api::Api& api, const HttpServer::Request& head) {
  const std::optional<std::uint64_t> id =
      api.token_share({head.method, head.target, head.authorization, std::string()});
  if (!id) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key = "token ";
  for (int shift = 60; shift >= 0; shift -= 4) key += kHex[(*id >> shift) & 15];
  return key;
}

// /v1 (and anything not a probe), on a worker: a session from the pool, the API within the
// request's deadline, and one retry on fresh connections when a backend refused a session
// that sat idle.
class ApiOnWorkers {
 public:
  ApiOnWorkers(const api::Api& api, Sessions& sessions, std::chrono::milliseconds read_timeout)
      : api_(api), sessions_(sessions), read_timeout_(read_timeout) {}

  Answered answer(const HttpServer::Request& request) {
    // Every PostgreSQL call of the request ends by its deadline (Redis's commands are bounded
    // by read_redis_options). An admin removal or ban may also wait for a period's lock.
    const bool admin = request.method == "PUT" || request.method == "DELETE";
    const auto deadline = std::chrono::steady_clock::now() + read_timeout_ +
                          (admin ? std::chrono::milliseconds{kAdminLockWait} : kNoWait);
    const cold::CallDeadline bounded(deadline);
    const api::Lane lane = api::lane_of(request.method, request.target);
    Sessions::Lease lease = sessions_.take(lane);
    Attempt a = attempt(*lease.session, request);
    // A write is never sent twice by the server (it may have been applied before it failed).
    const bool write =
        api::match_route(request.method, request.target.substr(0, request.target.find('?')))
            .access == api::Access::write;
    if (a.unavailable && lease.reused && !write && a.response.hung == Backend::none &&
        std::chrono::steady_clock::now() < deadline) {
      // A restart kills idle connections: that alone is no outage. The old session goes.
      // A backend that did not answer in time is not asked again: the deadline is spent.
      lease = sessions_.fresh(lane);
      a = attempt(*lease.session, request);
    }
    if (!a.unavailable && !a.broken) sessions_.give_back(lane, std::move(lease.session));
    std::string route = a.response.route;
    std::string outcome = std::move(a.response.outcome), reason = std::move(a.response.reason);
    auto outcomes = std::move(a.response.outcomes);
    return {to_http(request, std::move(a.response)), std::move(route), std::move(outcome),
            std::move(reason), std::move(outcomes)};
  }

 private:
  static constexpr std::chrono::milliseconds kNoWait{0};
  const api::Api& api_;
  Sessions& sessions_;
  std::chrono::milliseconds read_timeout_;

  struct Attempt {
    api::Response response;
    bool unavailable = false;  // a backend could not be reached (a 503 naming its kind)
    bool broken = false;       // the session's state is unknown: not reused
  };

  Attempt attempt(Session& s, const HttpServer::Request& request) const {
    Attempt a;
    try {
      reconnect_redis(s);
      // The API answers a backend's failure itself: 503 naming its kind, Retry-After, the
      // detail in the log.
      a.response = api_.handle({request.method, request.target, request.authorization, request.body,
                                request.idempotency_key, request.content_type},
                               s.boards);
      a.unavailable = a.response.status == 503 && !a.response.busy;
    } catch (const std::exception& e) {
      a.response = unexpected(request, e);
      a.broken = true;
    }
    return a;
  }
  // Redis's connection made again if it failed. When it cannot be (or Redis is shunned, as
  // a server that did not answer in time lately: read_redis_options), the API runs all the
  // same (its commands then fail at once, answered 503), so the answer counts under its
  // route, and reads that need no Redis (archived periods) do not wait for it.
  static void reconnect_redis(Session& s) {
    try {
      s.ready();
    } catch (const Error& e) {
      if (!e.transient()) throw;
    }
  }
  // A failure nobody foresaw: logged with what it was, answered 500 without it.
  static api::Response unexpected(const HttpServer::Request& request, const std::exception& e) {
    spdlog::error("serve: {} {} failed: {}", request.method, escape_control(request.path, false),
                  redact(e.what()));
    return {500, JsonLine().str("error", "internal error (logged)").done(), "other"};
  }
  static HttpServer::Response to_http(const HttpServer::Request& request, api::Response r) {
    HttpServer::Response out = json(r.status, std::move(r.body));
    out.headers = std::move(r.headers);
    out.cacheable =
        r.status == 200 && !r.admin && (request.method == "GET" || request.method == "HEAD");
    return out;
  }
};

// Every request: the probes and metrics here (inline: they never block), the rest to the API.
class Front {
 public:
  Front(const Readiness& readiness, ServeMetrics& metrics, ApiOnWorkers& reads, bool console)
      : readiness_(readiness), metrics_(metrics), reads_(reads), console_(console) {}

  HttpServer::Response operator()(const HttpServer::Request& request) {
    const auto started = std::chrono::steady_clock::now();
    Answered a = route(request);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    metrics_.observe(a.route, a.response.status, took.count());
    if (!a.outcome.empty()) metrics_.observe_write(a.outcome, a.reason);
    for (const auto& [outcome, reason] : a.outcomes) metrics_.observe_write(outcome, reason);
    return std::move(a.response);
  }

 private:
  const Readiness& readiness_;
  ServeMetrics& metrics_;
  ApiOnWorkers& reads_;
  bool console_;  // serve.console: the web console's pages at /console

  Answered route(const HttpServer::Request& request) {
    if (request.path == "/healthz") return {{200, "text/plain; charset=utf-8", "ok\n"}, "healthz"};
    if (request.path == "/readyz") {
      return {json(readiness_.ready() ? 200 : 503, readiness_.json()), "readyz"};
    }
    if (request.path == "/metrics") {
      return {{200, std::string(kPrometheusText), metrics_.render()}, "metrics"};
    }
    if (console_) {
      if (auto page = console_answer(request)) return {std::move(*page), "console"};
    }
    return reads_.answer(request);
  }
};

}  // namespace bk::http
