// serve: the HTTP read API (src/api) on cpp-httplib, plus /healthz, /readyz and /metrics.
// Each worker thread borrows a session (its own Redis and PostgreSQL connections and
// service objects: none of them is thread-safe) for the length of one request.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "api/api.h"
#include "cli/commands.h"
#include "cli/cursor_key.h"
#include "cli/http_server.h"
#include "cli/metrics_io.h"
#include "core/json.h"
#include "core/metrics.h"
#include "core/redact.h"
#include "service/deployment.h"
#include "service/reads.h"

namespace bk::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int /*sig*/) {
  g_stop.store(true);
}

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// BOARDKEEPER_SERVE_TOKENS (comma-separated) and serve.tokens_file (one a line, # comments).
std::vector<std::string> load_tokens(const ServeConfig& config) {
  std::vector<std::string> tokens;
  if (const char* env = std::getenv("BOARDKEEPER_SERVE_TOKENS")) {
    std::string list(env);
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      if (std::string t = trimmed(list.substr(start, comma - start)); !t.empty()) {
        tokens.push_back(std::move(t));
      }
      start = comma + 1;
    }
  }
  if (!config.tokens_file.empty()) {
    std::ifstream in(config.tokens_file);
    if (!in) {
      throw UsageError(config.where + ": serve.tokens_file '" + config.tokens_file +
                       "' cannot be read");
    }
    for (std::string line; std::getline(in, line);) {
      line = trimmed(line);
      if (!line.empty() && line[0] != '#') tokens.push_back(line);
    }
  }
  for (const std::string& t : tokens) add_secret(t);  // never printed, whatever happens
  return tokens;
}

// One worker's connections and services, made on first use and kept.
struct Session {
  Session(const Config& c, Clock clock, std::atomic<bool>& deployment_verified)
      : config(c),
        redis(redis_options(c.redis), redis::Connect::later),
        boards(c, redis, clock,
               std::function<cold::ColdStore&()>([this]() -> cold::ColdStore& { return cold(); })),
        reads(boards, [this]() -> cold::Archive& { return archive(); }),
        verified(deployment_verified) {}

  // Before a request: a connection that failed is made again (a failure is a 503 now, and
  // the next request tries again).
  void ready() {
    if (!redis.connected()) redis.reconnect();
  }

  cold::ColdStore& cold() {
    if (!cold_)
      cold_ = std::make_unique<cold::ColdStore>(config.postgres.url, config.postgres.schema);
    if (!verified.load()) {
      service::verify_deployment(redis, config.redis.key_prefix, *cold_, config.postgres.schema);
      verified.store(true);
    }
    return *cold_;
  }
  cold::Archive& archive() {
    cold();  // the schema must belong to this deployment before its history is read
    if (!archive_)
      archive_ = std::make_unique<cold::Archive>(config.postgres.url, config.postgres.schema);
    return *archive_;
  }

  const Config& config;
  redis::Connection redis;
  service::Leaderboards boards;
  service::Reads reads;
  std::atomic<bool>& verified;
  std::unique_ptr<cold::ColdStore> cold_;
  std::unique_ptr<cold::Archive> archive_;
};

class Sessions {
 public:
  Sessions(const Config& config, Clock clock) : config_(config), clock_(clock) {}

  std::unique_ptr<Session> take() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        auto s = std::move(free_.back());
        free_.pop_back();
        return s;
      }
    }
    return std::make_unique<Session>(config_, clock_, verified_);
  }
  void give_back(std::unique_ptr<Session> s) {
    const std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(s));
  }

 private:
  const Config& config_;
  Clock clock_;
  std::atomic<bool> verified_{false};
  std::mutex mu_;
  std::vector<std::unique_ptr<Session>> free_;
};

class ServeMetrics {
 public:
  void observe(const std::string& route, int status, double seconds) {
    requests_.add(1, {{"route", route}, {"code", std::to_string(status)}});
    latency_.observe(seconds, {{"route", route}});
  }
  std::string render() {
    update_process_metrics(registry_);
    return registry_.render();
  }

 private:
  metrics::Registry registry_;
  metrics::Family& requests_ = registry_.counter(
      "boardkeeper_http_requests_total", "HTTP requests answered, by route and status code.");
  metrics::Family& latency_ = registry_.histogram(
      "boardkeeper_http_request_duration_seconds", "Time to answer an HTTP request, by route.",
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5});
};

// A failure nobody foresaw: logged with what it was, answered 500 without it.
api::Response unexpected(const HttpServer::Request& request, const std::exception& e) {
  spdlog::error("serve: {} {} failed: {}", request.method, request.path, e.what());
  return {500, JsonLine().str("error", "internal error (logged)").done(), "other"};
}

HttpServer::Response json(int status, std::string body) {
  return {status, "application/json", std::move(body) + "\n"};
}

}  // namespace

int serve(Context& ctx, const ServeArgs& args) {
  const Config& config = ctx.config();
  const std::string listen = args.listen.empty() ? config.serve.listen : args.listen;
  const api::Api api(load_tokens(config.serve), cursor_key_provider(config));
  Sessions sessions(config, ctx.clock());
  ServeMetrics observed;

  // The readiness probe's own connection, so a probe never waits for a busy worker.
  std::mutex probe_mu;
  redis::Connection probe(redis_options(config.redis), redis::Connect::later);
  const auto not_ready = [&]() -> std::string {
    const std::lock_guard<std::mutex> lock(probe_mu);
    try {
      if (!probe.connected()) probe.reconnect();
      const redis::Reply r = probe.command({"PING"});
      if (r.is_error()) return "redis answered PING with an error: " + r.str;
      return "";
    } catch (const Error& e) {
      return std::string("redis is not reachable: ") + e.what();
    }
  };

  const auto handler = [&](const HttpServer::Request& request) -> HttpServer::Response {
    const auto started = std::chrono::steady_clock::now();
    HttpServer::Response out;
    std::string route;
    if (request.path == "/healthz") {
      route = "healthz";
      out = {200, "text/plain; charset=utf-8", "ok\n"};
    } else if (request.path == "/readyz") {
      route = "readyz";
      const std::string why = not_ready();
      out = why.empty() ? HttpServer::Response{200, "text/plain; charset=utf-8", "ok\n"}
                        : HttpServer::Response{503, "text/plain; charset=utf-8", why + "\n"};
    } else if (request.path == "/metrics") {
      route = "metrics";
      out = {200, std::string(kPrometheusText), observed.render()};
    } else {
      std::unique_ptr<Session> session = sessions.take();
      api::Response r;
      try {
        session->ready();
        r = api.handle({request.method, request.target, request.authorization, request.body},
                       session->reads);
      } catch (const Error& e) {
        if (e.transient()) {
          r = {503, JsonLine().str("error", e.what()).done(), "other"};
        } else {
          r = unexpected(request, e);
          session.reset();  // its connections may be in any state: the next request makes new ones
        }
      } catch (const std::exception& e) {
        r = unexpected(request, e);
        session.reset();
      }
      if (session) sessions.give_back(std::move(session));
      if (r.status == 503) spdlog::warn("serve: {} {}: {}", request.method, request.path, r.body);
      route = r.route;
      out = json(r.status, std::move(r.body));
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    observed.observe(route, out.status, took.count());
    return out;
  };

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  HttpServer::Options options;
  options.workers = args.workers;
  options.post = true;
  options.max_body = std::size_t{1024} * 1024;  // 1000 ids of up to 512 bytes, JSON-quoted
  options.flag = args.listen.empty() ? "serve.listen" : "--listen";
  std::unique_ptr<HttpServer> server = std::make_unique<HttpServer>(listen, handler, options);
  spdlog::info("serve: listening on http://{} ({} workers{})", server->address(), args.workers,
               api.authorized("") ? ", no tokens: the API is open" : ", bearer tokens required");
  if (const std::string why = not_ready(); !why.empty()) {
    spdlog::warn("serve: {}; reads answer 503 until it is", why);
  }
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("serve: stopping (requests in progress are answered first)");
  server.reset();
  return 0;
}

}  // namespace bk::cli
