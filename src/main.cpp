// boardkeeper's entry point: parse the command line, load the config, build the context,
// dispatch to one command, and turn every error into the contract's exit code. Every password
// it is given is registered (core/redact.h) before anything can print it, and every error it
// prints goes through the redaction.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cold/conninfo.h"
#include "config/config.h"
#include "core/json.h"
#include "core/redact.h"
#include "core/stop_points.h"
#include "core/time.h"
#include "redis/url.h"
#include "version.h"

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// CLI11 may quote an argument in its messages: any that looks like a URL is registered first.
void register_url_arguments(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.find("://") != std::string_view::npos) bk::add_url_secrets(arg);
  }
}

// How a fatal error is printed: one line on stderr, JSON when logs are JSON (a log line at
// level error with the exit code) or when --json asked for JSON output ({"error",
// "exit_code"}), else "boardkeeper: <message>". Always redacted.
struct ErrorForm {
  bool json_logs = false;
  bool json_output = false;
};

int fail_with(const ErrorForm& form, const std::string& message, int code) {
  const std::string text = bk::redact(message);
  if (form.json_logs) {
    std::cerr << bk::JsonLine()
                     .str("time", bk::format_rfc3339(bk::Clock().now()))
                     .str("level", "error")
                     .str("msg", "boardkeeper: " + text)
                     .num("exit_code", code)
                     .done()
              << "\n";
  } else if (form.json_output) {
    std::cerr << bk::JsonLine().str("error", text).num("exit_code", code).done() << "\n";
  } else {
    std::cerr << "boardkeeper: " << text << "\n";
  }
  return code;
}

// CLI11's answer to a bad command line (or --help), redacted; returns the exit code.
int exit_for(const CLI::App& app, const CLI::ParseError& e, const ErrorForm& form) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = app.exit(e, out, err);
  std::cout << bk::redact(out.str());
  if (code == 0) return 0;
  const int usage = static_cast<int>(bk::ExitCode::usage);
  if (form.json_logs || form.json_output) {
    std::string message = err.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return fail_with(form, message, usage);
  }
  std::cerr << bk::redact(err.str());
  return usage;
}

// The config's URLs, read as the connections will read them, so that a malformed one is a
// usage error (exit 2) for every command, check-config included, before anything connects.
void check_urls(const bk::Config& config, const bk::ConfigOverrides& overrides) {
  const auto source = [&](bool overridden, const char* variable, const char* key) {
    return " (" + (overridden ? "from " + std::string(variable) : key + (" in " + config.path)) +
           ")";
  };
  bk::redis::parse_url(config.redis.url, source(overrides.redis_url.has_value(),
                                                "BOARDKEEPER_REDIS_URL", "redis.url"));
  for (const std::string& node : config.redis.nodes) {
    bk::redis::parse_url(node, source(false, "", "redis.nodes"));
  }
  try {
    bk::cold::parse_conninfo(config.postgres.url);
  } catch (const bk::UsageError& e) {
    throw bk::UsageError(e.what() + source(overrides.postgres_url.has_value(),
                                           "BOARDKEEPER_POSTGRES_URL", "postgres.url"));
  }
  if (config.postgres.read_url.empty()) return;
  try {
    bk::cold::parse_conninfo(config.postgres.read_url);
  } catch (const bk::UsageError& e) {
    throw bk::UsageError(e.what() + source(overrides.postgres_read_url.has_value(),
                                           "BOARDKEEPER_POSTGRES_READ_URL", "postgres.read_url"));
  }
}

// Every command's arguments as CLI11 fills them, and the options above the commands.
struct CommandLine {
  std::string config_path;
  std::string now_text;
  std::string log_level = "info";
  std::string log_format = "text";
  bool json = false;
  bk::cli::TickArgs tick;
  bk::cli::AddArgs add;
  bk::cli::ReadArgs read;  // top, rank, around, history
  bk::cli::PeriodsArgs periods;
  bk::cli::IngestArgs ingest;
  bk::cli::ServeArgs serve;
  bk::cli::ModerationArgs moderation;  // remove, ban, unban, bans, reset, drop
  bk::cli::EraseArgs erase;
  bk::cli::ClosesArgs closes;
};

enum class Command {
  check_config,
  migrate,
  tick,
  add,
  top,
  rank,
  cohort,
  around,
  periods,
  history,
  ingest,
  serve,
  remove,
  ban,
  unban,
  bans,
  reset,
  drop,
  erase,
  closes
};

// Each command's CLI11 subcommand; exactly one is given (require_subcommand(1)).
using Subcommands = std::vector<std::pair<CLI::App*, Command>>;

void set_up_app(CLI::App& app, CommandLine& line) {
  app.set_version_flag("--version", std::string("boardkeeper ") + bk::kVersion + " (revision " +
                                        bk::kRevision + ", " + bk::kBuildType + " build, " +
                                        bk::kCompiler + ")");
  app.require_subcommand(1);
  // The options above the commands may also come after the command:
  // `boardkeeper check-config --config F`.
  app.fallthrough();
  app.footer(
      "Exit codes: 0 done; 1 failed (tick: at least one board failed, the others were still\n"
      "processed) or the thing read is not there (a member not on the board, a period not\n"
      "begun, removed or with nothing to read; remove: the member was on none of the periods);\n"
      "2 usage or configuration error (a malformed input, an unknown board or period, reset\n"
      "or drop without --yes); 3 Redis or PostgreSQL unreachable.\n"
      "\n"
      "Environment:\n"
      "  BOARDKEEPER_CONFIG        the config file when --config is not given\n"
      "                            (else /etc/boardkeeper/boardkeeper.yaml)\n"
      "  BOARDKEEPER_REDIS_URL     overrides redis.url of the config\n"
      "  BOARDKEEPER_POSTGRES_URL  overrides postgres.url of the config\n"
      "  BOARDKEEPER_POSTGRES_READ_URL  overrides postgres.read_url (serve's replica)\n"
      "  BOARDKEEPER_SERVE_TOKENS  serve: bearer tokens, comma-separated (with\n"
      "                            serve.tokens_file)\n"
      "  BOARDKEEPER_SERVE_ADMIN_TOKENS  serve: admin bearer tokens (remove, ban over\n"
      "                            HTTP), comma-separated (with serve.admin_tokens_file)\n"
      "  BOARDKEEPER_CURSOR_KEY    serve: the key page cursors are signed with, at least\n"
      "                            32 bytes, the same on every replica (default: one\n"
      "                            made once and kept in the PostgreSQL schema)\n"
      "Passwords in URLs never reach a log or an error.");
  app.add_option(
      "--config", line.config_path,
      "config file (default $BOARDKEEPER_CONFIG, then /etc/boardkeeper/boardkeeper.yaml)");
  app.add_option("--now", line.now_text, "set the service clock (RFC 3339), for tests and replays");
  app.add_option("--log-level", line.log_level, "trace, debug, info, warn, error, critical or off");
  app.add_option("--log-format", line.log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
}

CLI::App* set_up_tick(CLI::App& app, CommandLine& line) {
  bk::cli::TickArgs& args = line.tick;
  auto* tick = app.add_subcommand(
      "tick", "one lifecycle pass: TTLs, spill beyond hot_keep, archive closed periods");
  tick->add_flag("--dry-run", args.dry_run, "report what would change, change nothing");
  tick->add_option("--chunk", args.chunk,
                   "members per cold-tier transaction (default " +
                       std::to_string(bk::lifecycle::kDefaultChunk) + ")")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  tick->add_flag("--json", line.json, "one JSON object per board period");
  tick->add_option("--metrics-file", args.metrics_file,
                   "write the pass's Prometheus metrics to this file (atomically), also when "
                   "the pass fails; e.g. for node_exporter's textfile collector (*.prom)");
  tick->add_option("--pushgateway", args.pushgateway,
                   "push the metrics to this Prometheus Pushgateway (http://host:port), job "
                   "boardkeeper_tick; a failed push is a warning only");
  tick->add_option("--postgres-timeout", args.postgres_timeout_s,
                   "give up on a PostgreSQL call (a statement, an archive's merge and commit) "
                   "that has not answered after this many seconds: the server is taken as hung, "
                   "the pass ends (exit 3; 1 while publishing close notices) (default " +
                       std::to_string(bk::cli::kTickPostgresTimeoutS) + ")")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400}));
  return tick;
}

CLI::App* set_up_add(CLI::App& app, CommandLine& line) {
  bk::cli::AddArgs& args = line.add;
  auto* add = app.add_subcommand("add", "apply one update to every period of the board");
  add->add_option("board", args.board, "board name")->required();
  add->add_option("member", args.member, "member id")->required();
  add->add_option("value", args.value, "points (increment, best or replace per the board)")
      ->required();
  add->add_option("--at", args.at, "event time (RFC 3339; default now)");
  add->add_option("--id", args.event_id, "event id: applied at most once per board period");
  add->add_option("--name", args.name,
                  "the member's display name on the board (1-128 bytes of UTF-8)");
  add->add_option(
      "--meta", args.meta,
      "the member's JSON object on the board (at most 2 KiB), e.g. '{\"team\":\"red\"}'");
  add->add_flag("--json", line.json, "print the result as JSON");
  return add;
}

// top, rank and around share their arguments.
void set_up_reads(CLI::App& app, CommandLine& line, Subcommands& subcommands) {
  bk::cli::ReadArgs& read = line.read;
  auto* top = app.add_subcommand("top", "the best N members of a period");
  auto* rank = app.add_subcommand("rank", "one member's rank and points");
  auto* around = app.add_subcommand("around", "a member and K neighbours on each side");
  auto* cohort = app.add_subcommand("cohort", "a member's cohort on a league board, with zones");
  for (auto* sub : {top, rank, around, cohort}) {
    sub->add_option("board", read.board, "board name")->required();
    sub->add_option("period", read.period,
                    "period: hourly daily weekly monthly yearly alltime or a custom name")
        ->required();
    if (sub != top) sub->add_option("member", read.member, "member id")->required();
    sub->add_option("--period-id", read.period_id, "which period (default: the current one)");
    sub->add_flag("--json", line.json, "one JSON object per line");
  }
  top->add_option("-n", read.n, "how many (default 10)");
  top->add_option("--offset", read.offset, "skip this many first (default 0)");
  around->add_option("-k", read.k, "neighbours on each side (default 5)");
  subcommands.insert(subcommands.end(), {{top, Command::top},
                                         {rank, Command::rank},
                                         {around, Command::around},
                                         {cohort, Command::cohort}});
}

CLI::App* set_up_history(CLI::App& app, CommandLine& line) {
  bk::cli::ReadArgs& read = line.read;
  auto* history = app.add_subcommand("history", "an archived period, from PostgreSQL");
  history->add_option("board", read.board, "board name")->required();
  history->add_option("period", read.period, "period kind or custom name")->required();
  history->add_option("period-id", read.period_id, "which period, e.g. 2026-11-22")->required();
  history->add_option("-n", read.n, "how many (default 10)");
  history->add_flag("--json", line.json, "one JSON object per line");
  return history;
}

CLI::App* set_up_ingest(CLI::App& app, CommandLine& line) {
  bk::cli::IngestArgs& args = line.ingest;
  auto* ingest = app.add_subcommand("ingest", "consume score events from a Redis stream");
  ingest
      ->add_option("--stream", args.streams,
                   "stream key; repeat it to read several streams (default: ingest.stream of "
                   "the config, else <prefix>:events)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  ingest->add_option("--group", args.group,
                     "consumer group (default: ingest.group of the config, else boardkeeper)");
  ingest->add_flag("--drain", args.drain, "exit when the streams are empty");
  ingest
      ->add_option("--reclaim-idle-ms", args.reclaim_idle_ms,
                   "take over entries pending this long at another consumer (default: "
                   "ingest.reclaim_idle of the config, else 30000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400000}));
  ingest
      ->add_option("--max-wait", args.max_wait_s,
                   "with --drain: give up (exit 3, saying what is left pending and why) after "
                   "this many seconds without progress (default: ingest.max_wait of the "
                   "config, else 60)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400}));
  ingest->add_flag("--json", line.json, "print the final counts as JSON");
  ingest->add_option("--listen", args.listen,
                     "serve /metrics, /healthz and /readyz over HTTP on HOST:PORT (port 0: any "
                     "free port, logged)");
  return ingest;
}

CLI::App* set_up_serve(CLI::App& app, CommandLine& line) {
  bk::cli::ServeArgs& args = line.serve;
  auto* serve =
      app.add_subcommand("serve", "the HTTP read API (JSON), with /healthz, /readyz and /metrics");
  serve->add_option("--listen", args.listen,
                    "HOST:PORT to listen on (default: serve.listen of the config, else "
                    "127.0.0.1:8080; port 0: any free port, logged)");
  serve
      ->add_option("--workers", args.workers,
                   "threads running reads (connections are held by one event loop), half of "
                   "them for reads Redis alone answers, half for those that need PostgreSQL "
                   "(at least one each); each borrows pooled Redis and PostgreSQL connections "
                   "(default 32)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  return serve;
}

CLI::App* set_up_periods(CLI::App& app, CommandLine& line) {
  bk::cli::PeriodsArgs& args = line.periods;
  auto* periods =
      app.add_subcommand("periods", "each period: current id, start, end (next reset), counts");
  periods->add_option("board", args.board, "board name")->required();
  periods->add_flag("--json", line.json, "one JSON object per line");
  periods->add_flag("--archived", args.archived,
                    "the archived periods instead (newest first; pruned and lost ones are not "
                    "listed)");
  periods->add_option("--period", args.period, "--archived: of this period only");
  periods->add_option("-n", args.n, "--archived: how many per period (default 20)");
  periods->add_option("--before", args.before,
                      "--archived --period: those before this period id (the next page)");
  return periods;
}

// remove, ban, unban, bans, reset, drop (service/moderation.h).
void set_up_moderation(CLI::App& app, CommandLine& line, Subcommands& subcommands) {
  bk::cli::ModerationArgs& args = line.moderation;
  auto* remove =
      app.add_subcommand("remove", "take a member off a board's live periods (exit 1: on none)");
  auto* ban = app.add_subcommand("ban", "remove a member and refuse its later events on the board");
  auto* unban = app.add_subcommand("unban", "lift a member's ban from a board");
  auto* bans = app.add_subcommand("bans", "the board's banned members");
  auto* reset = app.add_subcommand("reset", "empty one live period of a board (needs --yes)");
  auto* drop = app.add_subcommand(
      "drop", "remove a board's live data and registry (needs --yes; bans kept)");
  for (auto* sub : {remove, ban, unban, bans, reset, drop}) {
    sub->add_option("board", args.board, "board name")->required();
  }
  for (auto* sub : {remove, ban, unban}) {
    sub->add_option("member", args.member, "member id")->required();
  }
  reset->add_option("period", args.period, "period kind or custom name")->required();
  remove->add_option("--period", args.period, "only this period (default: every live period)");
  for (auto* sub : {remove, reset}) {
    sub->add_option("--period-id", args.period_id, "which period (default: the current one)");
  }
  ban->add_option("--reason", args.reason, "why (at most 512 bytes, kept with the ban)");
  for (auto* sub : {reset, drop}) sub->add_flag("--yes", args.yes, "confirm: it cannot be undone");
  drop->add_flag("--history", args.history, "drop the board's archived history too");
  for (auto* sub : {remove, ban, unban, reset, drop}) {
    sub->add_flag("--json", line.json, "print what was removed as JSON");
  }
  bans->add_flag("--json", line.json, "one JSON object per line");
  subcommands.insert(subcommands.end(), {{remove, Command::remove},
                                         {ban, Command::ban},
                                         {unban, Command::unban},
                                         {bans, Command::bans},
                                         {reset, Command::reset},
                                         {drop, Command::drop}});
}

// erase (service/moderation.h): the right to erasure.
CLI::App* set_up_erase(CLI::App& app, CommandLine& line) {
  bk::cli::EraseArgs& args = line.erase;
  auto* erase = app.add_subcommand(
      "erase", "the right to erasure: forget a member on every matching board (audited)");
  erase->add_option("member", args.member, "member id")->required();
  erase->add_option("--board", args.boards, "only the boards matching this glob (default *)");
  erase->add_flag("--dry-run", args.dry_run, "count what would go; remove nothing, record nothing");
  erase->add_flag("--json", line.json, "the erasure as one JSON object");
  return erase;
}

// closes: the close notices (cold/closes.h).
CLI::App* set_up_closes(CLI::App& app, CommandLine& line) {
  bk::cli::ClosesArgs& args = line.closes;
  auto* closes = app.add_subcommand(
      "closes", "the close notices of archived periods (oldest first), from PostgreSQL");
  closes->add_option("--board", args.boards, "only the boards matching this glob (default *)");
  closes->add_option("--since", args.since,
                     "the notices after this seq, or archived at or after this RFC 3339 time "
                     "(default: the newest --limit)");
  closes->add_option("--limit", args.limit, "at most this many (default 100)");
  closes->add_flag("--json", line.json, "one JSON object per line");
  return closes;
}

// The whole command line, in the order --help lists the commands.
Subcommands set_up_commands(CLI::App& app, CommandLine& line) {
  set_up_app(app, line);
  Subcommands subcommands;
  subcommands.emplace_back(
      app.add_subcommand("check-config", "validate the config (incl. the 53-bit budget) and exit"),
      Command::check_config);
  subcommands.emplace_back(
      app.add_subcommand("migrate", "create or upgrade the PostgreSQL schema (idempotent)"),
      Command::migrate);
  subcommands.emplace_back(set_up_tick(app, line), Command::tick);
  subcommands.emplace_back(set_up_add(app, line), Command::add);
  set_up_reads(app, line, subcommands);
  subcommands.emplace_back(set_up_history(app, line), Command::history);
  subcommands.emplace_back(set_up_ingest(app, line), Command::ingest);
  subcommands.emplace_back(set_up_serve(app, line), Command::serve);
  subcommands.emplace_back(set_up_periods(app, line), Command::periods);
  set_up_moderation(app, line, subcommands);
  subcommands.emplace_back(set_up_erase(app, line), Command::erase);
  subcommands.emplace_back(set_up_closes(app, line), Command::closes);
  return subcommands;
}

std::optional<Command> command_given(const Subcommands& subcommands) {
  for (const auto& [app, command] : subcommands) {
    if (*app) return command;
  }
  return std::nullopt;
}

bk::Clock clock_from(const std::string& now_text) {
  if (now_text.empty()) return bk::Clock();
  const auto now = bk::parse_rfc3339(now_text);
  if (!now) throw bk::UsageError("--now '" + now_text + "' is not an RFC 3339 time");
  return bk::Clock(*now);
}

// The config (--config, $BOARDKEEPER_CONFIG or the default path) with the environment's URL
// overrides, its URLs checked as the connections will read them.
bk::Config load_checked_config(std::string config_path) {
  if (config_path.empty()) {
    config_path = env("BOARDKEEPER_CONFIG").value_or("/etc/boardkeeper/boardkeeper.yaml");
  }
  bk::ConfigOverrides overrides{env("BOARDKEEPER_REDIS_URL"), env("BOARDKEEPER_POSTGRES_URL"),
                                env("BOARDKEEPER_POSTGRES_READ_URL")};
  for (const auto& url :
       {overrides.redis_url, overrides.postgres_url, overrides.postgres_read_url}) {
    if (url) bk::add_url_secrets(*url);
  }
  bk::Config config = bk::load_config(config_path, overrides);
  check_urls(config, overrides);
  return config;
}

int run(Command command, bk::cli::Context& ctx, const CommandLine& line) {
  namespace cli = bk::cli;
  switch (command) {
    case Command::check_config:
      return cli::check_config(ctx);
    case Command::migrate:
      return cli::migrate(ctx);
    case Command::tick:
      return cli::tick(ctx, line.tick);
    case Command::add:
      return cli::add(ctx, line.add);
    case Command::top:
      return cli::top(ctx, line.read);
    case Command::rank:
      return cli::rank(ctx, line.read);
    case Command::around:
      return cli::around(ctx, line.read);
    case Command::cohort:
      return cli::cohort(ctx, line.read);
    case Command::periods:
      return cli::periods(ctx, line.periods);
    case Command::history:
      return cli::history(ctx, line.read);
    case Command::ingest:
      return cli::ingest(ctx, line.ingest);
    case Command::serve:
      return cli::serve(ctx, line.serve);
    case Command::remove:
      return cli::remove(ctx, line.moderation);
    case Command::ban:
      return cli::ban(ctx, line.moderation);
    case Command::unban:
      return cli::unban(ctx, line.moderation);
    case Command::bans:
      return cli::bans(ctx, line.moderation);
    case Command::reset:
      return cli::reset(ctx, line.moderation);
    case Command::drop:
      return cli::drop(ctx, line.moderation);
    case Command::erase:
      return cli::erase(ctx, line.erase);
    case Command::closes:
      return cli::closes(ctx, line.closes);
  }
  return static_cast<int>(bk::ExitCode::usage);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"boardkeeper: the whole life of Redis leaderboards", "boardkeeper"};
  CommandLine line;
  const Subcommands subcommands = set_up_commands(app, line);
  register_url_arguments(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return exit_for(app, e, {line.log_format == "json", line.json});
  }
  const ErrorForm form{line.log_format == "json", line.json};
  if (!line.tick.pushgateway.empty()) bk::add_url_secrets(line.tick.pushgateway);
  try {
    const auto log_format =
        line.log_format == "json" ? bk::cli::Format::json : bk::cli::Format::text;
    bk::cli::setup_logging(line.log_level, log_format);
    if (const auto stop_at = bk::arm_stop_points_from_env()) {
      spdlog::warn("{}={}: a test-only setting; this process stops itself there",
                   bk::kStopAtVariable, *stop_at);
    }
    const bk::Clock clock = clock_from(line.now_text);
    bk::Config config = load_checked_config(line.config_path);
    bk::cli::Context ctx(std::move(config), clock,
                         line.json ? bk::cli::Format::json : bk::cli::Format::text);
    const auto command = command_given(subcommands);
    return command ? run(*command, ctx, line) : static_cast<int>(bk::ExitCode::usage);
  } catch (const bk::Error& e) {
    return fail_with(form, e.what(), static_cast<int>(e.exit_code()));
  } catch (const std::exception& e) {
    return fail_with(form, std::string("unexpected error: ") + e.what(),
                     static_cast<int>(bk::ExitCode::failed));
  }
}

// libpqxx 6.4 leaks a libpq result when a connection breaks in the middle of a statement
// (its error path, not ours). Under LeakSanitizer (BK_SANITIZE=ON) that would turn the
// contract's exit code 3 into LSan's; other builds never call this.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name LeakSanitizer looks for.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpqxx-6.4.so\n";
}
