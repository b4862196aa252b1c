// tick: one lifecycle pass; prints what it did per board and returns 1 if any board failed.
// With --metrics-file / --pushgateway it also publishes the pass as Prometheus metrics,
// whether it succeeded or not (that is what alerts need).
#include "lifecycle/tick.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cold/call_deadline.h"
#include "http/metrics_io.h"
#include "service/deployment.h"

namespace bk::cli {
namespace {

using lifecycle::Backend;

struct Totals {
  std::int64_t periods = 0, spilled = 0, kept_hot = 0, ttl_fixed = 0, archived = 0, rows_hot = 0,
               rows_cold = 0, lost = 0, hot_lost = 0, recovered = 0, busy = 0, busy_streak_max = 0,
               boards_failed = 0, redis_errors = 0, postgres_errors = 0;
};

// How the pass ended when it did not return a report normally.
struct Abort {
  int exit_code = 0;
  Backend backend = Backend::none;
  std::string message;
};

Totals totals_of(const lifecycle::TickReport& report, const std::optional<Abort>& abort) {
  Totals t;
  for (const auto& b : report.boards) {
    for (const auto& p : b.periods) {
      ++t.periods;
      t.spilled += p.spilled;
      t.kept_hot += p.kept_in_place;
      t.ttl_fixed += p.ttl_fixed;
      t.archived += p.archived ? 1 : 0;
      t.rows_hot += p.archived_hot;
      t.rows_cold += p.archived_cold;
      t.lost += p.lost ? 1 : 0;
      t.hot_lost += p.hot_lost ? 1 : 0;
      t.busy += p.busy ? 1 : 0;
      t.busy_streak_max = std::max(t.busy_streak_max, p.busy_streak);
    }
    t.recovered += b.recovered;
    if (b.error.empty()) continue;
    ++t.boards_failed;
    t.redis_errors += b.error_backend == Backend::redis ? 1 : 0;
    t.postgres_errors += b.error_backend == Backend::postgres ? 1 : 0;
  }
  for (const auto& [error, backend] :
       {std::pair(&report.history.error, report.history.error_backend),
        std::pair(&report.closes.error, report.closes.error_backend)}) {
    if (error->empty()) continue;
    t.redis_errors += backend == Backend::redis ? 1 : 0;
    t.postgres_errors += backend == Backend::postgres ? 1 : 0;
  }
  // An abort outside any board (connecting, listing boards) is one more error.
  if (abort && (report.boards.empty() || report.boards.back().error != abort->message)) {
    t.redis_errors += abort->backend == Backend::redis ? 1 : 0;
    t.postgres_errors += abort->backend == Backend::postgres ? 1 : 0;
  }
  return t;
}

std::string archive_rows(std::int64_t hot, std::int64_t cold) {
  return std::to_string(hot + cold) + " rows (" + std::to_string(hot) + " hot + " +
         std::to_string(cold) + " cold)";
}

// What became of the period, for people; empty for a spill (its counts say it).
std::string period_note(const lifecycle::PeriodReport& p) {
  using lifecycle::PeriodOutcome;
  std::string note;
  switch (p.outcome) {
    case PeriodOutcome::spilled:
      break;
    case PeriodOutcome::not_in_config:
      note = "not a period of the board's config entry; left alone";
      break;
    case PeriodOutcome::archived:
      note = "archived " + archive_rows(p.archived_hot, p.archived_cold);
      if (p.hot_lost) {
        note +=
            "; HOT PART LOST: Redis had lost this period's data (its points that "
            "lived only in Redis are missing; recorded in periods)";
      }
      break;
    case PeriodOutcome::would_archive:
      note = "would archive " + archive_rows(p.would_archive_hot, p.would_archive_cold);
      break;
    case PeriodOutcome::already_archived:
      note = "already archived; hot keys freed";
      break;
    case PeriodOutcome::busy_archiving:
      note = "being archived by another tick; skipped";
      break;
    case PeriodOutcome::busy_spilling:
      note = "being spilled or archived by another tick; skipped";
      break;
    case PeriodOutcome::lost:
      note = "LOST: its hot key vanished before it was archived (recorded in periods)";
      break;
  }
  if (p.busy && p.busy_streak > 1) {
    note += " (" + std::to_string(p.busy_streak) + " ticks in a row)";
  }
  return note;
}

void print_board_json(const lifecycle::BoardReport& b) {
  for (const auto& p : b.periods) {
    std::cout << JsonLine()
                     .str("board", b.board)
                     .str("period", p.period)
                     .str("period_id", p.period_id)
                     .num("hot_before", p.hot_before)
                     .num("spilled", p.spilled)
                     .num("kept_hot", p.kept_in_place)
                     .num("ttl_fixed", p.ttl_fixed)
                     .num("rows_archived", p.archived_rows)
                     .flag("archived", p.archived)
                     .flag("lost", p.lost)
                     .flag("hot_lost", p.hot_lost)
                     .flag("busy", p.busy)
                     .num("busy_streak", p.busy_streak)
                     .str("note", period_note(p))
                     .done()
              << "\n";
  }
  if (!b.error.empty()) {
    std::cout << JsonLine().str("board", b.board).str("error", b.error).done() << "\n";
  }
}

void print_board_text(const Context& ctx, const lifecycle::BoardReport& b, bool dry_run) {
  std::cout << b.board << (b.error.empty() ? "" : "  FAILED: " + b.error) << "\n";
  for (const auto& p : b.periods) {
    std::cout << "  " << p.period << " " << p.period_id << ": ";
    if (const std::string note = period_note(p); !note.empty()) {
      std::cout << note;
    } else {
      std::cout << (dry_run ? "would spill " : "spilled ") << p.spilled << " of " << p.hot_before
                << " hot (hot_keep " << ctx.config().board_for(b.board)->hot_keep << ")";
      if (p.kept_in_place > 0)
        std::cout << ", " << p.kept_in_place << " updated meanwhile stay hot";
    }
    if (p.ttl_fixed > 0)
      std::cout << ", " << p.ttl_fixed << " TTL" << (p.ttl_fixed == 1 ? "" : "s")
                << (dry_run ? " to fix" : " fixed");
    std::cout << "\n";
  }
}

void print_history(const lifecycle::HistoryReport& h, bool json, bool dry_run) {
  if (h.periods == 0 && h.error.empty()) return;
  if (json) {
    JsonLine line;
    line.str("history", dry_run ? "would prune" : "pruned")
        .num("periods", h.periods)
        .num("rows", h.rows)
        .num("partitions", h.partitions);
    if (!h.error.empty()) line.str("error", h.error);
    std::cout << line.done() << "\n";
    return;
  }
  std::cout << "history" << (h.error.empty() ? "" : "  FAILED: " + h.error) << "\n";
  if (h.periods > 0) {
    std::cout << "  " << (dry_run ? "would remove" : "removed") << " the rows of " << h.periods
              << " period" << (h.periods == 1 ? "" : "s") << " past their retention (" << h.rows
              << " rows, " << h.partitions << " month partition" << (h.partitions == 1 ? "" : "s")
              << " dropped whole)\n";
  }
}

// False when counting the pending notices failed (PostgreSQL gone mid-publish): the reports say
// "unknown", never 0.
bool pending_known(const lifecycle::ClosesReport& c) {
  return c.counted || c.error.empty();
}
std::string pending_json(const lifecycle::ClosesReport& c) {
  return pending_known(c) ? std::to_string(c.pending) : "null";
}

// The close notices: what was published, what waits (always shown while some wait).
void print_closes(const lifecycle::ClosesReport& c, bool json, bool dry_run) {
  if (c.published == 0 && c.found == 0 && c.pending == 0 && c.error.empty()) return;
  if (json) {
    JsonLine line;
    line.str("closes", dry_run ? "would publish" : "published")
        .num("published", c.published)
        .num("refed", c.refed)
        .num("found", c.found)
        .raw("pending", pending_json(c));
    if (!c.error.empty()) line.str("error", c.error);
    std::cout << line.done() << "\n";
    return;
  }
  std::cout << "close notices" << (c.error.empty() ? "" : "  FAILED: " + c.error) << "\n";
  if (!dry_run) {
    std::cout << "  published " << c.published;
    if (c.refed > 0) std::cout << " (" << c.refed << " again: Redis had lost them)";
    if (c.found > 0) std::cout << ", " << c.found << " found in their stream already";
    std::cout << "\n";
  }
  if (!pending_known(c)) {
    std::cout << "  pending unknown (the count failed): the next tick publishes them\n";
  } else if (c.pending > 0) {
    std::cout << "  " << c.pending << " pending"
              << (dry_run ? "" : ": the next tick publishes them") << "\n";
  }
}

// The summary's close notices: what was published and what waits, or that the count failed
// (never "0 pending" for notices that may be waiting).
std::string closes_summary(const lifecycle::ClosesReport& c) {
  if (!pending_known(c)) {
    return fmt::format(", {} close notices published, pending unknown (the count failed)",
                       c.published);
  }
  if (c.published + c.pending == 0) return "";
  return fmt::format(", {} close notices published, {} pending", c.published, c.pending);
}

void print_report(const Context& ctx, const lifecycle::TickReport& report, bool dry_run) {
  const bool json = ctx.format() == Format::json;
  for (const auto& b : report.boards) {
    if (json) {
      print_board_json(b);
    } else {
      print_board_text(ctx, b, dry_run);
    }
  }
  print_history(report.history, json, dry_run);
  print_closes(report.closes, json, dry_run);
}

// The pass as metrics. Gauges, not counters: each tick is its own process and these are
// the values of this pass (a counter that restarts every run defeats rate()).
// How the pass ended, when, and where its time went.
void add_run_gauges(metrics::Registry& r, const lifecycle::TickReport& report, int exit_code,
                    bool dry_run, lifecycle::Seconds took, std::optional<double> last_success) {
  const auto gauge = [&r](const char* name, const char* help, double v) {
    r.gauge(name, help).set(v);
  };
  gauge("boardkeeper_tick_exit_code",
        "Exit code of the last tick: 0 done, 1 some board failed, 2 configuration (also: the "
        "schema belongs to another deployment), 3 Redis or PostgreSQL unreachable.",
        exit_code);
  gauge("boardkeeper_tick_dry_run", "1 if the last tick was a --dry-run (nothing changed).",
        dry_run ? 1 : 0);
  gauge("boardkeeper_tick_last_run_timestamp_seconds",
        "When the last tick ended (Unix time), whatever its outcome.", http::unix_now());
  if (last_success) {
    gauge("boardkeeper_tick_last_success_timestamp_seconds",
          "When a tick last ended with exit code 0 (Unix time; dry runs excluded).", *last_success);
  }
  gauge("boardkeeper_tick_duration_seconds", "Wall time of the last tick, connecting included.",
        took.count());
  auto& phases = r.gauge("boardkeeper_tick_phase_duration_seconds",
                         "Wall time of the last tick per phase, summed over board periods.");
  phases.set(report.timings.partitions.count(), {{"phase", "partitions"}});
  phases.set(report.timings.ttl.count(), {{"phase", "ttl"}});
  phases.set(report.timings.spill.count(), {{"phase", "spill"}});
  phases.set(report.timings.archive.count(), {{"phase", "archive"}});
  phases.set(report.timings.retention.count(), {{"phase", "retention"}});
  phases.set(report.timings.closes.count(), {{"phase", "closes"}});
}

// What the pass did to boards and periods.
void add_period_gauges(metrics::Registry& r, const lifecycle::TickReport& report, const Totals& t) {
  const auto gauge = [&r](const char* name, const char* help, double v) {
    r.gauge(name, help).set(v);
  };
  gauge("boardkeeper_tick_boards", "Boards the last tick processed.",
        static_cast<double>(report.boards.size()));
  gauge("boardkeeper_tick_boards_failed",
        "Boards the last tick failed on (the others were still processed; a lost period fails "
        "its board).",
        static_cast<double>(t.boards_failed));
  gauge("boardkeeper_tick_periods", "Live board periods the last tick visited.",
        static_cast<double>(t.periods));
  gauge("boardkeeper_tick_members_spilled",
        "Members the last tick moved from Redis to the cold tier (would move, in a dry run).",
        static_cast<double>(t.spilled));
  gauge("boardkeeper_tick_members_kept_hot",
        "Members the last tick wrote to the cold tier but left hot: updated during the spill.",
        static_cast<double>(t.kept_hot));
  gauge("boardkeeper_tick_ttls_fixed", "Missing TTLs the last tick re-asserted.",
        static_cast<double>(t.ttl_fixed));
  gauge("boardkeeper_tick_periods_archived", "Periods the last tick archived into history.",
        static_cast<double>(t.archived));
  gauge("boardkeeper_tick_periods_lost",
        "Periods the last tick found lost: the hot key vanished before the archive.",
        static_cast<double>(t.lost));
  gauge("boardkeeper_tick_periods_hot_lost",
        "Periods the last tick archived after Redis had lost their data (restart without "
        "persistence, FLUSHALL, failover): archived from the cold tier, points that lived only "
        "in Redis missing.",
        static_cast<double>(t.hot_lost));
  gauge("boardkeeper_tick_periods_recovered",
        "Periods with cold rows that Redis had forgotten had spilled, found by the last tick "
        "(their updates consult the cold tier again).",
        static_cast<double>(t.recovered));
  gauge("boardkeeper_tick_periods_busy",
        "Periods the last tick skipped because another tick was spilling or archiving them.",
        static_cast<double>(t.busy));
  gauge("boardkeeper_tick_periods_busy_streak_max",
        "The longest run of ticks in a row, this one included, that found one period busy "
        "(another tick spilling or archiving it); 0 when none was. Growing: a claim that is "
        "never released.",
        static_cast<double>(t.busy_streak_max));
}

// What the pass archived and pruned, and the errors that failed it.
void add_history_gauges(metrics::Registry& r, const lifecycle::TickReport& report,
                        const Totals& t) {
  const auto gauge = [&r](const char* name, const char* help, double v) {
    r.gauge(name, help).set(v);
  };
  auto& rows = r.gauge("boardkeeper_tick_rows_archived",
                       "History rows the last tick archived, by the tier they came from.");
  rows.set(static_cast<double>(t.rows_hot), {{"tier", "hot"}});
  rows.set(static_cast<double>(t.rows_cold), {{"tier", "cold"}});
  gauge("boardkeeper_tick_history_periods_pruned",
        "Archived periods whose history rows the last tick removed (history.retention); would "
        "remove, in a dry run.",
        static_cast<double>(report.history.periods));
  gauge("boardkeeper_tick_history_rows_pruned",
        "History rows the last tick removed (history.retention).",
        static_cast<double>(report.history.rows));
  gauge("boardkeeper_tick_history_partitions_dropped",
        "Month partitions of history the last tick dropped whole (history.retention).",
        static_cast<double>(report.history.partitions));
  if (report.closes.counted) {
    gauge("boardkeeper_close_notices_pending",
          "Close notices not yet in their Redis stream after the last tick (the next tick "
          "publishes them; growing: a stream that cannot be written, see the tick's log).",
          static_cast<double>(report.closes.pending));
    r.counter("boardkeeper_close_notices_published_total",
              "Close notices ever published to their streams (counted in PostgreSQL, so it "
              "survives the tick's process).")
        .add(static_cast<double>(report.closes.published_total));
  }
  gauge("boardkeeper_tick_close_notices_published",
        "Close notices the last tick added to their streams (re-fed ones included).",
        static_cast<double>(report.closes.published));
  gauge("boardkeeper_tick_redis_errors",
        "Redis errors that failed a board or the last tick (connection, timeout, error reply).",
        static_cast<double>(t.redis_errors));
  gauge("boardkeeper_tick_postgres_errors",
        "PostgreSQL errors that failed a board or the last tick.",
        static_cast<double>(t.postgres_errors));
}

std::string render_metrics(const lifecycle::TickReport& report, const Totals& t, int exit_code,
                           bool dry_run, lifecycle::Seconds took,
                           std::optional<double> last_success) {
  metrics::Registry r;
  http::add_build_info(r);
  add_run_gauges(r, report, exit_code, dry_run, took, last_success);
  add_period_gauges(r, report, t);
  add_history_gauges(r, report, t);
  return r.render();
}

constexpr const char* kLastSuccess = "boardkeeper_tick_last_success_timestamp_seconds";

// Writes and pushes; returns false when the metrics file could not be written.
bool publish(const TickArgs& args, const std::optional<http::HttpUrl>& gateway,
             const lifecycle::TickReport& report, const Totals& t, int exit_code,
             lifecycle::Seconds took) {
  const bool success = exit_code == 0 && !args.dry_run;
  bool written = true;
  if (!args.metrics_file.empty()) {
    // A failed run keeps the previous success time, so "time since last success" alerts work
    // from the file alone.
    const std::optional<double> last =
        success ? std::optional<double>(http::unix_now())
                : metrics::find_sample(http::read_file_or_empty(args.metrics_file), kLastSuccess);
    try {
      http::write_file_atomically(args.metrics_file,
                                  render_metrics(report, t, exit_code, args.dry_run, took, last));
    } catch (const Error& e) {
      spdlog::error("tick: {}", e.what());
      written = false;
    }
  }
  if (gateway) {
    // PUT replaces the group; a failed run POSTs without the success time, so the
    // Pushgateway keeps the one pushed by the last successful run.
    std::optional<double> last;
    if (success) last = http::unix_now();
    try {
      http::push_metrics(*gateway, "boardkeeper_tick", success,
                         render_metrics(report, t, exit_code, args.dry_run, took, last));
    } catch (const Error& e) {
      spdlog::warn("tick: pushing metrics to {} failed (exit code unchanged): {}", args.pushgateway,
                   e.what());
    }
  }
  return written;
}

// Runs the pass into `report`; how it ended when it did not end normally (and the exception,
// rethrown once the pass is reported).
std::optional<Abort> run_pass(Context& ctx, const TickArgs& args, lifecycle::TickReport& report,
                              std::exception_ptr& failure) {
  try {
    // Connecting included: a hung PostgreSQL costs a call this, never the whole run.
    const cold::CallTimeout bounded(std::chrono::seconds{args.postgres_timeout_s});
    lifecycle::Tick t(ctx.config(), ctx.redis(), ctx.cold(), ctx.archive(), ctx.clock());
    t.run({args.dry_run, args.chunk, archive_progress_display()}, report);
  } catch (const Error& e) {
    failure = std::current_exception();
    return Abort{static_cast<int>(e.exit_code()), lifecycle::backend_of(e), e.what()};
  } catch (const std::exception& e) {
    failure = std::current_exception();
    return Abort{static_cast<int>(ExitCode::failed), Backend::none, e.what()};
  }
  return std::nullopt;
}

// The one-line summary of the pass (stderr), with its figures as fields.
void log_summary(const TickArgs& args, const lifecycle::TickReport& report, const Totals& t,
                 bool aborted, int code, lifecycle::Seconds took) {
  const std::string message = fmt::format(
      "tick{}: {} boards, {} periods, {} members spilled, {} periods archived ({} rows), {} "
      "lost, {} TTLs fixed{}{}{}{}",
      args.dry_run ? " (dry run)" : "", report.boards.size(), t.periods, t.spilled, t.archived,
      t.rows_hot + t.rows_cold, t.lost, t.ttl_fixed, closes_summary(report.closes),
      report.history.periods > 0 ? fmt::format(", history of {} periods pruned ({} rows)",
                                               report.history.periods, report.history.rows)
                                 : "",
      t.hot_lost + t.recovered > 0
          ? fmt::format(", {} periods recovered from the cold tier, {} archived with their hot "
                        "part lost (Redis had lost data)",
                        t.recovered, t.hot_lost)
          : "",
      aborted               ? ", ABORTED (exit " + std::to_string(code) + ")"
      : report.any_failed() ? ", some boards FAILED"
                            : "");
  log_info_with_fields(message, JsonLine()
                                    .flag("dry_run", args.dry_run)
                                    .num("boards", static_cast<std::int64_t>(report.boards.size()))
                                    .num("boards_failed", t.boards_failed)
                                    .num("periods", t.periods)
                                    .num("spilled", t.spilled)
                                    .num("kept_hot", t.kept_hot)
                                    .num("archived", t.archived)
                                    .num("rows_archived", t.rows_hot + t.rows_cold)
                                    .num("lost", t.lost)
                                    .num("hot_lost", t.hot_lost)
                                    .num("recovered", t.recovered)
                                    .num("busy", t.busy)
                                    .num("ttl_fixed", t.ttl_fixed)
                                    .num("history_periods_pruned", report.history.periods)
                                    .num("history_rows_pruned", report.history.rows)
                                    .num("close_notices_published", report.closes.published)
                                    .raw("close_notices_pending", pending_json(report.closes))
                                    .raw("duration_seconds", metrics::format_value(took.count()))
                                    .num("exit_code", code)
                                    .fields());
}

}  // namespace

int tick(Context& ctx, const TickArgs& args) {
  std::optional<http::HttpUrl> gateway;
  if (!args.pushgateway.empty()) gateway = http::parse_http_url(args.pushgateway, "--pushgateway");
  if (!args.metrics_file.empty()) http::check_writable_dir(args.metrics_file, "--metrics-file");
  const auto started = std::chrono::steady_clock::now();

  lifecycle::TickReport report;
  std::exception_ptr failure;
  const std::optional<Abort> abort = run_pass(ctx, args, report, failure);
  const lifecycle::Seconds took = std::chrono::steady_clock::now() - started;
  if (!abort) print_report(ctx, report, args.dry_run);
  // The report is complete on stdout before the summary goes to stderr, so the two never
  // interleave mid-line when both go to one file.
  std::cout.flush();

  const Totals t = totals_of(report, abort);
  int code = abort                 ? abort->exit_code
             : report.any_failed() ? static_cast<int>(ExitCode::failed)
                                   : 0;
  log_summary(args, report, t, abort.has_value(), code, took);
  if (!publish(args, gateway, report, t, code, took) && code == 0) {
    code = static_cast<int>(ExitCode::failed);  // the pass worked but could not be reported
  }
  if (failure) std::rethrow_exception(failure);
  return code;
}

}  // namespace bk::cli
