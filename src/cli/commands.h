// One function per command; each returns the process exit code or throws a bk::Error.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "lifecycle/spill.h"

namespace bk::cli {

// A flag's value must lie in [min, max]; otherwise a UsageError (exit 2) naming the flag,
// the value and the range, then `hint` when given.
void check_range(const char* flag, std::int64_t value, std::int64_t min, std::int64_t max,
                 const char* hint = "");

int check_config(Context& ctx);
int migrate(Context& ctx);
// How long one PostgreSQL call of tick may go unanswered (seconds): far beyond what the largest
// archive's merge takes, within the half hour the shipped CronJob and systemd unit allow a run.
inline constexpr std::int64_t kTickPostgresTimeoutS = 600;

struct TickArgs {
  bool dry_run = false;
  std::int64_t chunk = lifecycle::kDefaultChunk;  // members per cold-tier transaction
  std::string metrics_file;  // Prometheus text, replaced atomically after the pass
  std::string pushgateway;   // http://host:port[/path] of a Pushgateway
  std::int64_t postgres_timeout_s = kTickPostgresTimeoutS;  // cold/call_deadline.h's CallTimeout
};
int tick(Context& ctx, const TickArgs& args);

struct AddArgs {
  std::string board;
  std::string member;
  std::string value;  // parsed here so a bad number is a usage error naming it
  std::optional<std::string> at;
  std::string event_id;
  std::optional<std::string> name;  // the member's profile on the board (core/profile.h)
  std::optional<std::string> meta;
};
int add(Context& ctx, const AddArgs& args);

struct ReadArgs {
  std::string board;
  std::string period;
  std::string member;  // rank, around
  std::optional<std::string> period_id;
  std::int64_t n = 10;      // top
  std::int64_t offset = 0;  // top
  std::int64_t k = 5;       // around
};
int top(Context& ctx, const ReadArgs& args);
int rank(Context& ctx, const ReadArgs& args);
// A member's cohort on a league board (cohort.cpp); exit 1 when it has none in the period.
int cohort(Context& ctx, const ReadArgs& args);
int around(Context& ctx, const ReadArgs& args);
struct PeriodsArgs {
  std::string board;
  bool archived = false;              // the archived periods instead of the current ones
  std::optional<std::string> period;  // --archived: of this period only (default: each)
  std::int64_t n = 20;                // --archived: how many per period, newest first
  std::optional<std::string> before;  // --archived --period: those before this period id
};
int periods(Context& ctx, const PeriodsArgs& args);
int history(Context& ctx, const ReadArgs& args);

// Flags not given fall back to the config's ingest section.
struct IngestArgs {
  std::vector<std::string> streams;  // --stream, repeatable; empty: ingest.stream
  std::optional<std::string> group;  // ingest.group
  bool drain = false;
  std::optional<std::int64_t> reclaim_idle_ms;  // ingest.reclaim_idle
  std::optional<std::int64_t> max_wait_s;       // ingest.max_wait (with --drain)
  std::string listen;  // HOST:PORT for /metrics, /healthz, /readyz; empty: none
};
int ingest(Context& ctx, const IngestArgs& args);

// Moderation (service/moderation.h): remove, ban, unban, bans, reset, drop.
struct ModerationArgs {
  std::string board;
  std::string member;                    // remove, ban, unban
  std::optional<std::string> period;     // remove: --period; reset: the period (required)
  std::optional<std::string> period_id;  // remove, reset: --period-id
  std::string reason;                    // ban: --reason
  bool yes = false;                      // reset, drop: --yes (required)
  bool history = false;                  // drop: --history
};
int remove(Context& ctx, const ModerationArgs& args);
int ban(Context& ctx, const ModerationArgs& args);
int unban(Context& ctx, const ModerationArgs& args);
int bans(Context& ctx, const ModerationArgs& args);
int reset(Context& ctx, const ModerationArgs& args);
int drop(Context& ctx, const ModerationArgs& args);

struct ServeArgs {
  std::string listen;        // HOST:PORT; empty: serve.listen
  std::size_t workers = 32;  // threads running reads; as many pooled sessions at most
};
int serve(Context& ctx, const ServeArgs& args);

struct EraseArgs {
  std::string member;
  std::string boards = "*";  // --board GLOB
  bool dry_run = false;
};
int erase(Context& ctx, const EraseArgs& args);

struct ClosesArgs {
  std::string boards = "*";          // --board GLOB
  std::optional<std::string> since;  // --since SEQ|TIME; none: the newest --limit
  std::int64_t limit = 100;
};
int closes(Context& ctx, const ClosesArgs& args);

}  // namespace bk::cli
