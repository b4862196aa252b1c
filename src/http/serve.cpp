// serve's process: the server, its options, the stop within the grace (http/serve.h).
#include "http/serve.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>
#include <string_view>
#include <thread>

#include "api/admin.h"
#include "api/api.h"
#include "api/request_parts.h"
#include "api/tokens.h"
#include "cold/call_deadline.h"
#include "cold/conninfo.h"
#include "core/error.h"
#include "core/redact.h"
#include "http/cold_rank_loader.h"
#include "http/console.h"
#include "http/cursor_key.h"
#include "http/front.h"
#include "http/readiness.h"
#include "http/serve_metrics.h"
#include "http/server.h"
#include "http/sessions.h"
#include "http/tokens.h"
#include "service/deployment.h"

namespace bk::http {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};  // SIGHUP: re-read the tokens (in the main loop)

extern "C" void on_stop_signal(int /*sig*/) {
  g_stop.store(true);
}

extern "C" void on_reload_signal(int /*sig*/) {
  g_reload.store(true);
}

const std::vector<std::string> kProbes{"/healthz", "/readyz", "/metrics"};

// Outside /v1 (the probes, the console) only GET and HEAD are served: a body sent there is
// refused before it is read, as one the API would refuse.
std::optional<HttpServer::Response> body_outside_api(const HttpServer::Request& head) {
  if (head.target.rfind("/v1/", 0) == 0 || head.method == "GET" || head.method == "HEAD") {
    return std::nullopt;
  }
  HttpServer::Response out = json(
      405, JsonLine()
               .str("error", "method " + quoted(head.method) + " is not allowed here (GET, HEAD)")
               .done());
  out.headers = {{"Allow", "GET, HEAD"}};
  return out;
}

HttpServer::Options server_options(const ServeConfig& config, const ServeOptions& args,
                                   const api::Api& api) {
  HttpServer::Options o;
  // A request the API refuses anyway (no token; a POST but to `members`) is refused before
  // its body is read: no client without a token can make serve hold request bodies.
  o.admit = [&api](const HttpServer::Request& head) -> std::optional<HttpServer::Response> {
    if (auto outside = body_outside_api(head)) return outside;
    auto refused =
        api.refuse_before_body({head.method, head.target, head.authorization, std::string()});
    if (!refused) return std::nullopt;
    HttpServer::Response out = json(refused->status, std::move(refused->body));
    out.headers = std::move(refused->headers);
    return out;
  };
  o.inline_paths = kProbes;
  o.probe_paths = kProbes;  // answered beyond max_connections and outside the shares
  if (config.console) {
    for (std::string& p : console_paths()) o.inline_paths.push_back(std::move(p));
  }
  o.workers = args.workers;
  // 7/8 of the workers for reads that Redis alone answers as a rule, 1/8 for heavier ones
  // (api::lane_of: PostgreSQL, many ids): neither waits for a worker the other holds, and the
  // heavy ones, few and at a lower CPU priority, cannot take the cores (and Redis) from the
  // light ones (docs/http-api.md).
  o.lane_workers = {std::max<std::size_t>(1, args.workers - args.workers / 8),
                    std::max<std::size_t>(1, args.workers / 8)};
  o.lane = [](const HttpServer::Request& r) {
    return static_cast<std::size_t>(api::lane_of(r.method, r.target));
  };
  o.lane_nice = {0, 10};
  o.post = true;
  o.put_delete = true;  // the admin routes (api/admin.h)
  o.max_write_body = api::kMaxAdminBody;
  o.max_body = std::size_t{1024} * 1024;  // 1000 ids of up to 512 bytes, JSON-quoted
  o.header_timeout = config.header_timeout;
  o.body_timeout = config.body_timeout;
  o.idle_timeout = config.idle_timeout;
  o.max_connections = static_cast<std::size_t>(config.max_connections);
  o.body_bytes_in_flight = static_cast<std::size_t>(config.bodies_in_flight_mb) << 20;
  o.body_bytes_per_key = static_cast<std::size_t>(config.body_share_mb()) << 20;
  o.requests_per_key = static_cast<std::size_t>(config.request_share());
  o.share_key = [&api](const HttpServer::Request& head) { return share_key(api, head); };
  o.cors_origins = config.cors_origins;
  o.cache_max_age = std::chrono::duration_cast<std::chrono::seconds>(config.cache_max_age);
  o.flag = args.listen.empty() ? "serve.listen" : "--listen";
  return o;
}

// serve.probe_listen: the probes on a listener of their own, which no client of the API can
// fill; any other path is a 404 there.
HttpServer::Options probe_options(const ServeConfig& config) {
  HttpServer::Options o;
  o.inline_paths = kProbes;
  o.probe_paths = kProbes;
  o.header_timeout = config.header_timeout;
  o.idle_timeout = config.idle_timeout;
  o.max_connections = 256;
  o.flag = "serve.probe_listen";
  return o;
}

HttpServer::Handler probes_only(HttpServer::Handler front) {
  return [front = std::move(front)](const HttpServer::Request& r) {
    if (std::find(kProbes.begin(), kProbes.end(), r.path) != kProbes.end()) return front(r);
    return json(404, JsonLine()
                         .str("error",
                              "only /healthz, /readyz and /metrics are served on "
                              "serve.probe_listen")
                         .done());
  };
}

// Every connection is a descriptor: the soft limit (often 1024) goes up to the hard one, so
// that serve.max_connections, not the limit, decides how many are held.
void raise_open_files_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    spdlog::debug("serve: open files limit raised from {} to {}", before, limit.rlim_cur);
  }
}

// SIGTERM: requests in progress are answered. Those still waiting on a backend after kCutAt
// stop waiting (their PostgreSQL calls are cut and answer 503; a Redis command ends by
// serve.read_timeout); should the server still not have stopped by kStopLimit (a
// read_timeout longer than that), the process ends anyway: the orchestrator's grace (30 s)
// is not spent on a hung backend. The cold ranks' loader stops beside them, within the same
// limit.
constexpr std::chrono::milliseconds kCutAt{3000};
constexpr std::chrono::milliseconds kStopLimit{4500};

[[noreturn]] void exit_without(const char* what) {
  spdlog::warn("serve: {} still waiting on a backend after {} ms: exiting without them", what,
               kStopLimit.count());
  spdlog::default_logger()->flush();
  std::_Exit(0);
}

void stop_within_grace(HttpServer& server, Readiness& readiness, ColdRankLoader& loader) {
  const auto limit = std::chrono::steady_clock::now() + kStopLimit;
  readiness.request_stop();
  loader.request_stop();
  auto stopped = std::async(std::launch::async, [&server] { server.stop(); });
  if (stopped.wait_for(kCutAt) != std::future_status::ready) {
    cold::cut_every_call();
    if (stopped.wait_until(limit) != std::future_status::ready) exit_without("requests");
  }
  cold::cut_every_call();  // the loader's, if it still waits
  if (!loader.ended_by(limit)) exit_without("the cold ranks' loader");
}

void on_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sa.sa_handler = on_reload_signal;
  sigaction(SIGHUP, &sa, nullptr);
}

// SIGHUP: every token source read again; all of them good, the new tokens hold from the next
// request on; any of them bad, the old ones stay (the log names the source, never a token).
void reload_tokens(const ServeConfig& config, api::TokenStore& store, ServeMetrics& metrics) {
  try {
    api::Tokens tokens = load_tokens(config);
    spdlog::info("serve: tokens reloaded on SIGHUP: {}", token_counts(tokens));
    store.replace(std::move(tokens));
    metrics.observe_token_reload(true);
  } catch (const UsageError& e) {
    spdlog::error("serve: tokens not reloaded, the old ones stay: {}", redact(e.what()));
    metrics.observe_token_reload(false);
  }
}

// serve.rate_limits, per process (docs/operations.md): none when no class has a limit.
std::shared_ptr<api::RateLimits> rate_limits(const RateLimitsConfig& config) {
  if (!config.read && !config.write && !config.admin && !config.write_per_member) return nullptr;
  for (const auto& [name, limit] : {std::pair{"read", config.read},
                                    {"write", config.write},
                                    {"admin", config.admin},
                                    {"write_per_member", config.write_per_member}}) {
    if (limit) {
      spdlog::info("serve: rate limit {}: {}/s, burst {} (per token, in this process)", name,
                   limit->per_second, limit->burst);
    }
  }
  return std::make_shared<api::RateLimits>(config);
}

}  // namespace

int serve(const Config& config, Clock clock, const ServeOptions& args) {
  const std::string listen = args.listen.empty() ? config.serve.listen : args.listen;
  on_signals();  // before anything slow: a SIGHUP then must not end serve
  const auto tokens = std::make_shared<api::TokenStore>(load_tokens(config.serve));
  log_unset_token_sources(config.serve);
  const auto limits = rate_limits(config.serve.rate_limits);
  const api::Api api(cursor_key_provider(config), tokens, limits);
  Readiness readiness(
      service::redis_options(config.redis), cold::parse_conninfo(config.postgres.url).conninfo,
      config.postgres.read_url.empty() ? std::string()
                                       : cold::parse_conninfo(config.postgres.read_url).conninfo);
  readiness.check_now();   // the first /readyz answers know (unreachable ones are logged)
  api.fetch_cursor_key();  // now, while PostgreSQL (or Redis's copy) can give it
  Sessions sessions(config, clock);
  ServeMetrics observed(sessions.cold_ranks(), sessions.replica_reads(), sessions.shared_link(),
                        readiness, limits);
  ApiOnWorkers reads(api, sessions, config.serve.read_timeout);
  ColdRankLoader loader(sessions);
  raise_open_files_limit();

  const Front front(readiness, observed, reads, config.serve.console);
  HttpServer server(listen, front, server_options(config.serve, args, api));
  spdlog::info("serve: listening on http://{} ({} workers{})", server.address(), args.workers,
               api.authorized("") ? ", no tokens: the API is open" : ", bearer tokens required");
  std::optional<HttpServer> probes;
  if (!config.serve.probe_listen.empty()) {
    probes.emplace(config.serve.probe_listen, probes_only(front), probe_options(config.serve));
    spdlog::info("serve: probes also on http://{}", probes->address());
  }
  readiness.start();
  while (!g_stop.load()) {
    if (g_reload.exchange(false)) reload_tokens(config.serve, *tokens, observed);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  spdlog::info("serve: stopping (requests in progress are answered first)");
  stop_within_grace(server, readiness, loader);
  return 0;
}

}  // namespace bk::http
