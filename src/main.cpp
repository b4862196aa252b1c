// boardkeeper's entry point: parse the command line, load the config, build the context,
// dispatch to one command, and turn every error into the contract's exit code. Every password
// it is given is registered (core/redact.h) before anything can print it, and every error it
// prints goes through the redaction.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cold/conninfo.h"
#include "config/config.h"
#include "core/json.h"
#include "core/redact.h"
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
}

}  // namespace

int main(int argc, char** argv) {
  using bk::ExitCode;
  CLI::App app{"boardkeeper: the whole life of Redis leaderboards", "boardkeeper"};
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
      "begun, removed or with nothing to read); 2 usage or configuration error (a malformed\n"
      "input, an unknown board or period); 3 Redis or PostgreSQL unreachable.\n"
      "\n"
      "Environment:\n"
      "  BOARDKEEPER_CONFIG        the config file when --config is not given\n"
      "                            (else /etc/boardkeeper/boardkeeper.yaml)\n"
      "  BOARDKEEPER_REDIS_URL     overrides redis.url of the config\n"
      "  BOARDKEEPER_POSTGRES_URL  overrides postgres.url of the config\n"
      "  BOARDKEEPER_SERVE_TOKENS  serve: bearer tokens, comma-separated (with\n"
      "                            serve.tokens_file)\n"
      "  BOARDKEEPER_CURSOR_KEY    serve: the key page cursors are signed with, at least\n"
      "                            32 bytes, the same on every replica (default: one\n"
      "                            made once and kept in the PostgreSQL schema)\n"
      "Passwords in URLs never reach a log or an error.");

  std::string config_path;
  std::string now_text;
  std::string log_level = "info";
  std::string log_format = "text";
  app.add_option(
      "--config", config_path,
      "config file (default $BOARDKEEPER_CONFIG, then /etc/boardkeeper/boardkeeper.yaml)");
  app.add_option("--now", now_text, "set the service clock (RFC 3339), for tests and replays");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off");
  app.add_option("--log-format", log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));

  bool json = false;
  auto* check =
      app.add_subcommand("check-config", "validate the config (incl. the 53-bit budget) and exit");

  auto* migrate =
      app.add_subcommand("migrate", "create or upgrade the PostgreSQL schema (idempotent)");
  bk::cli::TickArgs tick_args;
  auto* tick = app.add_subcommand(
      "tick", "one lifecycle pass: TTLs, spill beyond hot_keep, archive closed periods");
  tick->add_flag("--dry-run", tick_args.dry_run, "report what would change, change nothing");
  tick->add_option("--chunk", tick_args.chunk, "members per cold-tier transaction (default 5000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  tick->add_flag("--json", json, "one JSON object per board period");
  tick->add_option("--metrics-file", tick_args.metrics_file,
                   "write the pass's Prometheus metrics to this file (atomically), also when "
                   "the pass fails; e.g. for node_exporter's textfile collector (*.prom)");
  tick->add_option("--pushgateway", tick_args.pushgateway,
                   "push the metrics to this Prometheus Pushgateway (http://host:port), job "
                   "boardkeeper_tick; a failed push is a warning only");

  bk::cli::AddArgs add_args;
  auto* add = app.add_subcommand("add", "apply one update to every period of the board");
  add->add_option("board", add_args.board, "board name")->required();
  add->add_option("member", add_args.member, "member id")->required();
  add->add_option("value", add_args.value, "points (increment, best or replace per the board)")
      ->required();
  add->add_option("--at", add_args.at, "event time (RFC 3339; default now)");
  add->add_option("--id", add_args.event_id, "event id: applied at most once per board period");
  add->add_option("--name", add_args.name,
                  "the member's display name on the board (1-128 bytes of UTF-8)");
  add->add_option(
      "--meta", add_args.meta,
      "the member's JSON object on the board (at most 2 KiB), e.g. '{\"team\":\"red\"}'");
  add->add_flag("--json", json, "print the result as JSON");

  bk::cli::ReadArgs read;
  auto* top = app.add_subcommand("top", "the best N members of a period");
  auto* rank = app.add_subcommand("rank", "one member's rank and points");
  auto* around = app.add_subcommand("around", "a member and K neighbours on each side");
  for (auto* sub : {top, rank, around}) {
    sub->add_option("board", read.board, "board name")->required();
    sub->add_option("period", read.period,
                    "period: hourly daily weekly monthly yearly alltime or a custom name")
        ->required();
    if (sub != top) sub->add_option("member", read.member, "member id")->required();
    sub->add_option("--period-id", read.period_id, "which period (default: the current one)");
    sub->add_flag("--json", json, "one JSON object per line");
  }
  top->add_option("-n", read.n, "how many (default 10)");
  top->add_option("--offset", read.offset, "skip this many first (default 0)");
  around->add_option("-k", read.k, "neighbours on each side (default 5)");

  auto* history = app.add_subcommand("history", "an archived period, from PostgreSQL");
  history->add_option("board", read.board, "board name")->required();
  history->add_option("period", read.period, "period kind or custom name")->required();
  history->add_option("period-id", read.period_id, "which period, e.g. 2026-11-22")->required();
  history->add_option("-n", read.n, "how many (default 10)");
  history->add_flag("--json", json, "one JSON object per line");

  bk::cli::IngestArgs ingest_args;
  auto* ingest = app.add_subcommand("ingest", "consume score events from a Redis stream");
  ingest
      ->add_option("--stream", ingest_args.streams,
                   "stream key; repeat it to read several streams (default: ingest.stream of "
                   "the config, else <prefix>:events)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  ingest->add_option("--group", ingest_args.group,
                     "consumer group (default: ingest.group of the config, else boardkeeper)");
  ingest->add_flag("--drain", ingest_args.drain, "exit when the streams are empty");
  ingest
      ->add_option("--reclaim-idle-ms", ingest_args.reclaim_idle_ms,
                   "take over entries pending this long at another consumer (default: "
                   "ingest.reclaim_idle of the config, else 30000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400000}));
  ingest
      ->add_option("--max-wait", ingest_args.max_wait_s,
                   "with --drain: give up (exit 3, saying what is left pending and why) after "
                   "this many seconds without progress (default: ingest.max_wait of the "
                   "config, else 60)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400}));
  ingest->add_flag("--json", json, "print the final counts as JSON");
  ingest->add_option("--listen", ingest_args.listen,
                     "serve /metrics, /healthz and /readyz over HTTP on HOST:PORT (port 0: any "
                     "free port, logged)");

  bk::cli::ServeArgs serve_args;
  auto* serve =
      app.add_subcommand("serve", "the HTTP read API (JSON), with /healthz, /readyz and /metrics");
  serve->add_option("--listen", serve_args.listen,
                    "HOST:PORT to listen on (default: serve.listen of the config, else "
                    "127.0.0.1:8080; port 0: any free port, logged)");
  serve
      ->add_option("--workers", serve_args.workers,
                   "threads running reads (connections are held by one event loop); each "
                   "borrows pooled Redis and PostgreSQL connections (default 32)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));

  bk::cli::PeriodsArgs periods_args;
  auto* periods =
      app.add_subcommand("periods", "each period: current id, start, end (next reset), counts");
  periods->add_option("board", periods_args.board, "board name")->required();
  periods->add_flag("--json", json, "one JSON object per line");
  periods->add_flag("--archived", periods_args.archived,
                    "the archived periods instead (newest first; pruned and lost ones are not "
                    "listed)");
  periods->add_option("--period", periods_args.period, "--archived: of this period only");
  periods->add_option("-n", periods_args.n, "--archived: how many per period (default 20)");
  periods->add_option("--before", periods_args.before,
                      "--archived --period: those before this period id (the next page)");

  register_url_arguments(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return exit_for(app, e, {log_format == "json", json});
  }
  const ErrorForm form{log_format == "json", json};
  if (!tick_args.pushgateway.empty()) bk::add_url_secrets(tick_args.pushgateway);

  try {
    const auto format = log_format == "json" ? bk::cli::Format::json : bk::cli::Format::text;
    bk::cli::setup_logging(log_level, format);
    bk::Clock clock;
    if (!now_text.empty()) {
      const auto now = bk::parse_rfc3339(now_text);
      if (!now) throw bk::UsageError("--now '" + now_text + "' is not an RFC 3339 time");
      clock = bk::Clock(*now);
    }
    if (config_path.empty()) {
      config_path = env("BOARDKEEPER_CONFIG").value_or("/etc/boardkeeper/boardkeeper.yaml");
    }
    bk::ConfigOverrides overrides{env("BOARDKEEPER_REDIS_URL"), env("BOARDKEEPER_POSTGRES_URL")};
    for (const auto& url : {overrides.redis_url, overrides.postgres_url}) {
      if (url) bk::add_url_secrets(*url);
    }
    bk::Config config = bk::load_config(config_path, overrides);
    check_urls(config, overrides);
    bk::cli::Context ctx(std::move(config), clock,
                         json ? bk::cli::Format::json : bk::cli::Format::text);

    if (*check) return bk::cli::check_config(ctx);
    if (*migrate) return bk::cli::migrate(ctx);
    if (*tick) return bk::cli::tick(ctx, tick_args);
    if (*add) return bk::cli::add(ctx, add_args);
    if (*top) return bk::cli::top(ctx, read);
    if (*rank) return bk::cli::rank(ctx, read);
    if (*around) return bk::cli::around(ctx, read);
    if (*periods) return bk::cli::periods(ctx, periods_args);
    if (*history) return bk::cli::history(ctx, read);
    if (*ingest) return bk::cli::ingest(ctx, ingest_args);
    if (*serve) return bk::cli::serve(ctx, serve_args);
    return static_cast<int>(ExitCode::usage);
  } catch (const bk::Error& e) {
    return fail_with(form, e.what(), static_cast<int>(e.exit_code()));
  } catch (const std::exception& e) {
    return fail_with(form, std::string("unexpected error: ") + e.what(),
                     static_cast<int>(ExitCode::failed));
  }
}

// libpqxx 6.4 leaks a libpq result when a connection breaks in the middle of a statement
// (its error path, not ours). Under LeakSanitizer (BK_SANITIZE=ON) that would turn the
// contract's exit code 3 into LSan's; other builds never call this.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name LeakSanitizer looks for.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpqxx-6.4.so\n";
}
