// The YAML config as typed, validated values. Every problem found while loading names the
// file, line and column of the offending node and says what to change.
#pragma once
#include <date/tz.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/defaults.h"
#include "core/error.h"
#include "core/league.h"
#include "core/period.h"
#include "core/policy.h"
#include "core/score_codec.h"
#include "core/tiers.h"
#include "core/time.h"

namespace bk {

// Thrown by load_config / parse_config. what() lists every problem, one per line, each
// "FILE:LINE:COLUMN: message" (line and column 1-based).
class ConfigError : public UsageError {
 public:
  explicit ConfigError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// TLS settings, used with rediss:// URLs (every node of a cluster).
struct RedisTlsConfig {
  std::string ca_file;    // CA to verify the server with; empty: the system store
  std::string cert_file;  // client certificate (mutual TLS); with key_file
  std::string key_file;
  std::string server_name;  // name the server's certificate must carry; empty: the host
};

struct RedisConfig {
  std::string url = "redis://127.0.0.1:6379/0";
  std::string key_prefix = "lb";
  bool cluster = false;            // url (and nodes) are seeds of a Redis Cluster
  std::vector<std::string> nodes;  // more seed URLs (redis[s]://host:port)
  RedisTlsConfig tls;
};

struct PostgresConfig {
  std::string url = "postgresql://boardkeeper@127.0.0.1:5432/boards";
  std::string schema = "boardkeeper";
  // A streaming replica of `url` for serve's reads (cold ranks, profiles, history), used only
  // when it has replayed what the primary had written when the read began; empty: none.
  std::string read_url;
};

// The stream consumer (`ingest`); its command line's flags override these.
struct IngestConfig {
  // At least one; no duplicates. Default: {"<key_prefix>:events"}.
  std::vector<std::string> streams;
  std::string group = "boardkeeper";
  Millis reclaim_idle = std::chrono::seconds{30};  // > 0
  bool trim = true;                   // trim the entries every consumer group has acknowledged
  std::int64_t dead_maxlen = 100000;  // > 0; <stream>:dead is capped near this length
  Millis max_wait = std::chrono::seconds{60};  // > 0; a drain without progress this long ends
};

// Why a list of streams cannot be consumed (empty, an empty name, one listed twice, one the
// dead-letter stream of another); nullopt when it can.
std::optional<std::string> stream_list_problem(const std::vector<std::string>& streams);
// On a Redis Cluster a stream and its dead-letter stream (<stream>:dead) are written by one
// script, so they must share a hash slot: the stream's name needs a hash tag ({...}, not
// empty). Why this stream lacks one; nullopt when it has one.
std::optional<std::string> cluster_stream_problem(const std::string& stream);

// One route class's rate limit (serve.rate_limits): a token bucket that holds at most `burst`
// requests and refills at `per_second` (written `500/s`, `300/m` or `1000/h`).
struct RateLimit {
  double per_second = 0;   // > 0
  std::int64_t burst = 0;  // >= 1; when not written: one second's worth (at least 1)
};

// serve.rate_limits: per token (and per member for writes), per serve process; a class not
// written has no limit.
struct RateLimitsConfig {
  std::optional<RateLimit> read;
  std::optional<RateLimit> write;
  std::optional<RateLimit> admin;
  std::optional<RateLimit> write_per_member;  // per board and member, beside write's per token
};

// The HTTP read API (`serve`); its --listen flag overrides `listen`.
struct ServeConfig {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT
  // Bearer tokens, one a line (blank lines and lines starting with # skipped); empty: none.
  // BOARDKEEPER_SERVE_TOKENS (comma-separated) adds more. Read when `serve` starts.
  std::string tokens_file;
  std::string where;  // "FILE:LINE:COLUMN" of tokens_file, for messages
  // Admin bearer tokens (the moderation routes: remove, ban, unban, bans), in the same form;
  // BOARDKEEPER_SERVE_ADMIN_TOKENS adds more. Distinct from the read tokens. None: the admin
  // routes answer 403 to everyone.
  std::string admin_tokens_file;
  std::string admin_where;  // "FILE:LINE:COLUMN" of admin_tokens_file
  // Write bearer tokens (POST .../members/{m}/scores: game servers, never players' devices),
  // one a line, each optionally scoped to board globs: `TOKEN boards=game:*,cup`.
  // BOARDKEEPER_SERVE_WRITE_TOKENS (comma-separated, unscoped) adds more. Distinct from the
  // read and admin tokens. None: writes are off (their route answers 404).
  std::string write_tokens_file;
  std::string write_where;  // "FILE:LINE:COLUMN" of write_tokens_file
  // A request's head must arrive within header_timeout, its body within body_timeout
  // (else 408); a keep-alive connection idle for idle_timeout is closed. Each > 0.
  Millis header_timeout = std::chrono::seconds{10};
  Millis body_timeout = std::chrono::seconds{10};
  Millis idle_timeout = std::chrono::seconds{60};
  // A read's deadline: its Redis and PostgreSQL calls (connecting, sending, waiting) end
  // within it, or it answers 503 naming the backend that did not answer. > 0.
  Millis read_timeout = std::chrono::seconds{2};
  // Cold ranks from memory (service/cold_index.h): at most this many MiB of spilled periods'
  // cold rows kept in memory, least recently used periods dropped first. [0, 1048576]; 0:
  // every cold read asks PostgreSQL.
  std::int64_t cold_rank_memory_mb = 64;
  std::int64_t max_connections = 4096;  // [1, 1000000]; beyond it a JSON 503
  // Request bodies in flight (from the head's arrival to the answer), counted by their declared
  // size before they are read: all clients together at most bodies_in_flight_mb MiB (beyond:
  // 503), one token (without one: one client address) at most its share (beyond: 429). Each
  // in [1, 1048576], the share at most the whole; unset, the share is a quarter of the whole.
  std::int64_t bodies_in_flight_mb = 64;
  std::optional<std::int64_t> bodies_in_flight_per_token_mb{};
  // Requests one token (or address) may have in progress at once (beyond: 429), in
  // [1, max_connections]; unset: a quarter of max_connections.
  std::optional<std::int64_t> requests_in_progress_per_token{};
  std::int64_t body_share_mb() const;  // the share, set or not (at least 1)
  std::int64_t request_share() const;  // the same
  // HOST:PORT of a listener for the probes alone (/healthz, /readyz, /metrics); "": none.
  std::string probe_listen{};
  // Origins (scheme://host[:port], or "*") whose browsers may read (CORS); empty: none.
  std::vector<std::string> cors_origins;
  // Whole seconds; > 0: successful reads say Cache-Control: max-age=N (0: no-store).
  Millis cache_max_age{0};
  // The read-only web console at /console (static pages that read /v1 in the browser).
  bool console = true;
  RateLimitsConfig rate_limits{};
};

// History retention (`history.retention`): per period name (a period kind or a custom
// period's name), how long after its period ended tick keeps an archived period's rows.
// Absent (or `forever`): kept.
struct HistoryConfig {
  // Period name -> duration, or nullopt for `forever`; "default" for names not listed.
  std::map<std::string, std::optional<Millis>> retention;
  // `history.large_period_rows`: a period archived with at least this many members gets a
  // history table of its own (sql/006_history_large.sql).
  std::int64_t large_period_rows = kDefaultLargePeriodRows;

  // The retention of periods called `period`, or nullopt when they are kept forever.
  std::optional<Millis> retention_for(const std::string& period) const;
};

// A league board (`league:`): core/league.h.
using LeagueConfig = LeagueRules;

inline constexpr std::int64_t kDefaultNoticeTop = 10;
inline constexpr std::int64_t kMaxNoticeTop = 1000;

struct BoardConfig {
  std::string pattern;              // exact board name or glob
  std::vector<PeriodSpec> periods;  // in the order written
  std::string timezone = "UTC";
  const date::time_zone* zone = nullptr;  // never null after loading
  Order order = Order::desc;
  TieBreak tie = TieBreak::earliest;
  Policy policy = Policy::increment;
  Millis resolution{1};  // time_resolution: ms -> 1ms, s -> 1000ms
  std::int64_t min_points = 0;
  std::int64_t max_points = 0;
  std::int64_t hot_keep = 1000;
  std::int64_t display = 100;
  Millis max_clock_skew = std::chrono::minutes{5};
  Millis dedupe_window = std::chrono::hours{24};  // how long an event id is remembered
  Millis grace = std::chrono::minutes{10};
  std::map<std::string, Millis> retention;  // by period name, `default` already applied
  // Close notices (docs/architecture.md): the Redis stream a closed period's notice goes to
  // ("": <key_prefix>:closes) and how many of its top standings the entry carries.
  std::string closes_stream{};
  std::int64_t notice_top = kDefaultNoticeTop;  // [1, kMaxNoticeTop]
  // Named rules, first match wins (core/tiers.h); empty: the board has no tiers, and its
  // reads carry no "tier".
  Tiers tiers{};
  // Set on a league board: its one period kind ranks members in cohorts (never spilled).
  std::optional<LeagueConfig> league{};
  std::string where;  // "FILE:LINE:COLUMN" of the entry, for messages

  const PeriodSpec* period(std::string_view name) const;  // nullptr when not used
  Millis retention_for(const PeriodSpec& period) const;
  ScoreLayout layout_for(const PeriodSpec& period) const;
};

struct Config {
  std::string path;
  RedisConfig redis;
  PostgresConfig postgres;
  IngestConfig ingest;
  ServeConfig serve;
  HistoryConfig history;
  std::vector<BoardConfig> boards;

  // The first board entry whose name or glob matches, or nullptr.
  const BoardConfig* board_for(std::string_view board_name) const;
};

// Environment values that override the file (BOARDKEEPER_REDIS_URL, ..._POSTGRES_URL).
struct ConfigOverrides {
  std::optional<std::string> redis_url;
  std::optional<std::string> postgres_url;
  std::optional<std::string> postgres_read_url;
};

Config parse_config(std::string_view yaml_text, const std::string& path_for_messages,
                    const ConfigOverrides& overrides);
// Reads the file; an unreadable file is a ConfigError naming it.
Config load_config(const std::string& path, const ConfigOverrides& overrides);

}  // namespace bk
