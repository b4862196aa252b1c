// serve: the HTTP read API (src/api) behind HttpServer, with /healthz, /readyz and /metrics
// answered on the server's I/O thread. Reads run on --workers threads, each borrowing a
// session (Redis and PostgreSQL connections and service objects: none is thread-safe) from
// a pool for the length of one request.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "api/admin.h"
#include "api/api.h"
#include "cli/admin_tokens.h"
#include "cli/commands.h"
#include "cli/console.h"
#include "cli/cursor_key.h"
#include "cli/http_server.h"
#include "cli/metrics_io.h"
#include "cli/readiness.h"
#include "cli/serve_metrics.h"
#include "cold/call_deadline.h"
#include "cold/conninfo.h"
#include "core/json.h"
#include "core/metrics.h"
#include "core/redact.h"
#include "redis/shared_link.h"
#include "service/cold_index.h"
#include "service/deployment.h"
#include "service/reads.h"
#include "service/replica.h"

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

// --- Tokens: a source that is configured must yield a token (fail closed) -----------------

std::vector<std::string> tokens_of_list(const std::string& list) {
  std::vector<std::string> tokens;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (std::string t = trimmed(list.substr(start, comma - start)); !t.empty()) {
      tokens.push_back(std::move(t));
    }
    start = comma + 1;
  }
  return tokens;
}

std::vector<std::string> tokens_of_file(const ServeConfig& config) {
  std::ifstream in(config.tokens_file);
  if (!in) {
    throw UsageError(config.where + ": serve.tokens_file '" + config.tokens_file +
                     "' cannot be read");
  }
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    line = trimmed(line);
    if (!line.empty() && line[0] != '#') tokens.push_back(line);
  }
  return tokens;
}

// BOARDKEEPER_SERVE_TOKENS (comma-separated) and serve.tokens_file (one a line, # comments).
// Each source that is set must name a token: one that names none stops serve (exit 2) rather
// than serving without authentication by mistake.
std::vector<std::string> load_tokens(const ServeConfig& config) {
  std::vector<std::string> tokens;
  const char* env = std::getenv("BOARDKEEPER_SERVE_TOKENS");
  if (env != nullptr) {
    tokens = tokens_of_list(env);
    for (const std::string& t : tokens) add_secret(t);  // never printed, whatever happens
    if (tokens.empty()) {
      throw UsageError(
          "BOARDKEEPER_SERVE_TOKENS is set but names no token (comma-separated tokens); unset "
          "it to serve without authentication");
    }
  }
  if (!config.tokens_file.empty()) {
    const std::vector<std::string> from_file = tokens_of_file(config);
    for (const std::string& t : from_file) add_secret(t);
    if (from_file.empty()) {
      throw UsageError(config.where + ": serve.tokens_file '" + config.tokens_file +
                       "' names no token (one a line; blank lines and # comments are skipped)");
    }
    tokens.insert(tokens.end(), from_file.begin(), from_file.end());
  }
  if (env == nullptr && config.tokens_file.empty()) {
    spdlog::warn(
        "serve: no token source (serve.tokens_file, BOARDKEEPER_SERVE_TOKENS): /v1 is served "
        "without authentication to anyone who can connect");
  }
  return tokens;
}

// --- Sessions ------------------------------------------------------------------------------

// How long an admin removal or ban waits for a spill or archive holding a period's lock
// before it answers 503 (the member is hidden already; a retry finishes it): a worker is not
// held for the whole of a long spill.
constexpr std::chrono::seconds kAdminLockWait{5};

// Redis as reads need it: no command (the handshake included) waits past the read's
// deadline, so a frozen server costs a read serve.read_timeout, not the 10 s of a command;
// and one shun for every worker's connection, so that it costs one read, not each.
redis::Options read_redis_options(const Config& c) {
  redis::Options o = redis_options(c.redis);
  o.command_timeout = c.serve.read_timeout;
  o.connect_timeout = std::min(o.connect_timeout, c.serve.read_timeout);
  o.shuns = std::make_shared<Shuns>();
  return o;
}

// One worker's connections and services, made on first use and kept.
struct Session {
  Session(const Config& c, redis::Connection redis_connection, Clock clock,
          std::atomic<bool>& deployment_verified,
          const std::shared_ptr<service::ColdIndexes>& cold_ranks,
          const std::shared_ptr<service::ReplicaReads>& replica_reads)
      : config(c),
        redis(std::move(redis_connection)),
        boards(c, redis, clock,
               std::function<cold::ColdStore&()>([this]() -> cold::ColdStore& { return cold(); })),
        verified(deployment_verified) {
    boards.moderation().wait_for_locks_at_most(kAdminLockWait);
    service::Reads& reads = boards.reads();
    reads.read_history_from([this]() -> cold::History& { return archive(); });
    if (cold_ranks) reads.share_cold_ranks(cold_ranks);
    if (replica_reads) {
      replica_reads_ = replica_reads;
      reads.read_from_replica([this]() -> cold::ColdStore& { return replica(); }, replica_reads);
    }
  }

  // Before a request: a connection that failed is made again.
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
  // A streaming replica of the cold store (postgres.read_url), connected when first asked.
  cold::ColdStore& replica() {
    if (!replica_)
      replica_ =
          std::make_unique<cold::ColdStore>(config.postgres.read_url, config.postgres.schema);
    return *replica_;
  }
  // The history on the replica when it has replayed what the primary had written by now
  // (service/replica.h), else on the primary.
  cold::History& archive() {
    cold::ColdStore& primary = cold();  // the schema must belong to this deployment first
    if (replica_reads_ && service::fresh_replica(
                              primary, [this]() -> cold::ColdStore& { return replica(); },
                              *replica_reads_) != nullptr) {
      if (!replica_archive_) {
        replica_archive_ =
            std::make_unique<cold::History>(config.postgres.read_url, config.postgres.schema);
      }
      return *replica_archive_;
    }
    if (!archive_)
      archive_ = std::make_unique<cold::History>(config.postgres.url, config.postgres.schema);
    return *archive_;
  }

  const Config& config;
  redis::Connection redis;
  service::Leaderboards boards;
  std::atomic<bool>& verified;
  std::unique_ptr<cold::ColdStore> cold_;
  std::unique_ptr<cold::History> archive_;
  std::shared_ptr<service::ReplicaReads> replica_reads_;  // null: no replica
  std::unique_ptr<cold::ColdStore> replica_;
  std::unique_ptr<cold::History> replica_archive_;
};

// Sessions not in use. A worker holds at most one at a time, so there are never more than
// --workers of them.
class Sessions {
 public:
  Sessions(const Config& config, Clock clock)
      : config_(config), redis_(read_redis_options(config)), clock_(clock) {
    // The Redis lane's reads (a round trip or two each) share one pipelined connection
    // (redis/shared_link.h); the PostgreSQL lane's, which take several steps each deciding
    // the next, keep a connection per worker, and so do all on a cluster (routed by slot).
    if (!redis_.cluster) {
      links_[index(api::Lane::redis)] = std::make_shared<redis::SharedLink>(redis_);
    }
    if (config.serve.cold_rank_memory_mb > 0 && !config.postgres.url.empty()) {
      cold_ranks_ = std::make_shared<service::ColdIndexes>(
          static_cast<std::size_t>(config.serve.cold_rank_memory_mb) << 20);
    }
    if (!config.postgres.read_url.empty())
      replica_reads_ = std::make_shared<service::ReplicaReads>();
  }

  struct Lease {
    std::unique_ptr<Session> session;
    bool reused = false;  // taken idle from the pool: its connections may have died meanwhile
  };
  // A session of `lane` (api::lane_of), which shares that lane's Redis connection.
  Lease take(api::Lane lane) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      auto& idle = free_[index(lane)];
      if (!idle.empty()) {
        Lease lease{std::move(idle.back()), true};
        idle.pop_back();
        return lease;
      }
    }
    return fresh(lane);
  }
  Lease fresh(api::Lane lane) {
    const auto& link = links_[index(lane)];
    // A session over the shared link is as old as the link's connection: a request that
    // meets a restart on it is retried like one on a session taken idle.
    return {std::make_unique<Session>(
                config_,
                link ? redis::Connection(link) : redis::Connection(redis_, redis::Connect::later),
                clock_, verified_, cold_ranks_, replica_reads_),
            link != nullptr};
  }
  // Null when serve.cold_rank_memory_mb is 0 (or there is no cold tier).
  const std::shared_ptr<service::ColdIndexes>& cold_ranks() const { return cold_ranks_; }
  // Null without postgres.read_url.
  const std::shared_ptr<service::ReplicaReads>& replica_reads() const { return replica_reads_; }
  // The Redis lane's connection; null on a cluster.
  const std::shared_ptr<redis::SharedLink>& shared_link() const {
    return links_[index(api::Lane::redis)];
  }
  void give_back(api::Lane lane, std::unique_ptr<Session> s) {
    const std::lock_guard<std::mutex> lock(mu_);
    free_[index(lane)].push_back(std::move(s));
  }

 private:
  const Config& config_;
  static constexpr std::size_t kLanes = 2;  // api::Lane
  static std::size_t index(api::Lane lane) { return static_cast<std::size_t>(lane); }
  const redis::Options redis_;                                    // one shun for all
  std::array<std::shared_ptr<redis::SharedLink>, kLanes> links_;  // null: one per worker
  Clock clock_;
  std::atomic<bool> verified_{false};
  std::shared_ptr<service::ColdIndexes> cold_ranks_;
  std::shared_ptr<service::ReplicaReads> replica_reads_;
  std::mutex mu_;
  std::array<std::vector<std::unique_ptr<Session>>, kLanes> free_;
};

// Cold ranks from memory (service/cold_index.h): one thread loads the indexes that reads ask
// for, on a session of its own, each load bounded by kLoadDeadline, so a slow or hung
// PostgreSQL costs the loader, never a read (reads ask PostgreSQL meanwhile).
class ColdRankLoader {
 public:
  static constexpr std::chrono::seconds kLoadDeadline{60};

  explicit ColdRankLoader(Sessions& sessions) : sessions_(sessions) {
    if (sessions_.cold_ranks()) thread_ = std::thread([this] { run(); });
  }
  ~ColdRankLoader() {
    if (!thread_.joinable()) return;
    request_stop();
    cold::cut_every_call();  // a load waiting on PostgreSQL ends now
    thread_.join();
  }
  ColdRankLoader(const ColdRankLoader&) = delete;
  ColdRankLoader& operator=(const ColdRankLoader&) = delete;

  // Takes no new load; the one in progress goes on (cold::cut_every_call ends its waits).
  void request_stop() {
    if (sessions_.cold_ranks()) sessions_.cold_ranks()->stop();
  }
  // Whether the thread has ended by `limit` (true without one).
  bool ended_by(std::chrono::steady_clock::time_point limit) {
    return !thread_.joinable() || ended_.wait_until(limit) == std::future_status::ready;
  }

 private:
  Sessions& sessions_;
  std::promise<void> end_;
  std::future<void> ended_ = end_.get_future();
  std::thread thread_;

  void run() {
    std::unique_ptr<Session> s;
    service::ColdIndexes& cache = *sessions_.cold_ranks();
    while (!cache.stopped()) {
      const auto ref = cache.next(std::chrono::seconds(1));
      if (ref) load(s, *ref);
    }
    end_.set_value();
  }
  void load(std::unique_ptr<Session>& s, const service::PeriodRef& ref) {
    const auto started = std::chrono::steady_clock::now();
    const cold::CallDeadline bounded(started + kLoadDeadline);
    try {
      if (!s) s = sessions_.fresh(api::Lane::postgres).session;
      s->ready();
      if (s->boards.reads().load_cold_ranks(ref)) {
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
        spdlog::debug("serve: cold ranks of {} {} {} in memory ({:.3f} s)", ref.board,
                      ref.spec->name, ref.period.id, took.count());
      }
    } catch (const std::exception& e) {
      spdlog::warn("serve: cold ranks of {} {} {} not loaded (reads ask PostgreSQL): {}", ref.board,
                   ref.spec->name, ref.period.id, redact(e.what()));
      s.reset();  // its connections' state is unknown
    }
  }
};

// --- Answers -----------------------------------------------------------------------------

// An answer and its route (for metrics).
struct Answered {
  HttpServer::Response response;
  std::string route;
};

HttpServer::Response json(int status, std::string body) {
  return {status, "application/json", std::move(body) + "\n"};
}

// /v1 (and anything not a probe), on a worker: a session from the pool, the API within the
// request's deadline, and one retry on fresh connections when a backend refused a session
// that sat idle.
class ReadApi {
 public:
  ReadApi(const api::Api& api, Sessions& sessions, std::chrono::milliseconds read_timeout)
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
    if (a.unavailable && lease.reused && a.response.hung == Backend::none &&
        std::chrono::steady_clock::now() < deadline) {
      // A restart kills idle connections: that alone is no outage. The old session goes.
      // A backend that did not answer in time is not asked again: the deadline is spent.
      lease = sessions_.fresh(lane);
      a = attempt(*lease.session, request);
    }
    if (!a.unavailable && !a.broken) sessions_.give_back(lane, std::move(lease.session));
    std::string route = a.response.route;
    return {to_http(request, std::move(a.response)), std::move(route)};
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
      a.response = api_.handle(
          {request.method, request.target, request.authorization, request.body}, s.boards);
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
  Front(const Readiness& readiness, ServeMetrics& metrics, ReadApi& reads, bool console)
      : readiness_(readiness), metrics_(metrics), reads_(reads), console_(console) {}

  HttpServer::Response operator()(const HttpServer::Request& request) {
    const auto started = std::chrono::steady_clock::now();
    Answered a = route(request);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    metrics_.observe(a.route, a.response.status, took.count());
    return std::move(a.response);
  }

 private:
  const Readiness& readiness_;
  ServeMetrics& metrics_;
  ReadApi& reads_;
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

HttpServer::Options server_options(const ServeConfig& config, const ServeArgs& args,
                                   const api::Api& api) {
  HttpServer::Options o;
  // A request the API refuses anyway (no token; a POST but to `members`) is refused before
  // its body is read: no client without a token can make serve hold request bodies.
  o.admit = [&api](const HttpServer::Request& head) -> std::optional<HttpServer::Response> {
    auto refused =
        api.refuse_before_body({head.method, head.target, head.authorization, std::string()});
    if (!refused) return std::nullopt;
    HttpServer::Response out = json(refused->status, std::move(refused->body));
    out.headers = std::move(refused->headers);
    return out;
  };
  o.inline_paths = {"/healthz", "/readyz", "/metrics"};
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
  o.cors_origins = config.cors_origins;
  o.cache_max_age = std::chrono::duration_cast<std::chrono::seconds>(config.cache_max_age);
  o.flag = args.listen.empty() ? "serve.listen" : "--listen";
  return o;
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

void on_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

}  // namespace

int serve(Context& ctx, const ServeArgs& args) {
  const Config& config = ctx.config();
  const std::string listen = args.listen.empty() ? config.serve.listen : args.listen;
  std::vector<std::string> tokens = load_tokens(config.serve);
  std::vector<std::string> admin_tokens = load_admin_tokens(config.serve, tokens);
  const api::Api api(std::move(tokens), cursor_key_provider(config), std::move(admin_tokens));
  Readiness readiness(
      redis_options(config.redis), cold::parse_conninfo(config.postgres.url).conninfo,
      config.postgres.read_url.empty() ? std::string()
                                       : cold::parse_conninfo(config.postgres.read_url).conninfo);
  readiness.check_now();   // the first /readyz answers know (unreachable ones are logged)
  api.fetch_cursor_key();  // now, while PostgreSQL (or Redis's copy) can give it
  Sessions sessions(config, ctx.clock());
  ServeMetrics observed(sessions.cold_ranks(), sessions.replica_reads(), sessions.shared_link(),
                        readiness);
  ReadApi reads(api, sessions, config.serve.read_timeout);
  ColdRankLoader loader(sessions);
  on_stop_signals();
  raise_open_files_limit();

  HttpServer server(listen, Front(readiness, observed, reads, config.serve.console),
                    server_options(config.serve, args, api));
  spdlog::info("serve: listening on http://{} ({} workers{})", server.address(), args.workers,
               api.authorized("") ? ", no tokens: the API is open" : ", bearer tokens required");
  readiness.start();
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("serve: stopping (requests in progress are answered first)");
  stop_within_grace(server, readiness, loader);
  return 0;
}

}  // namespace bk::cli
