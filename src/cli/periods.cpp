// periods: each period of a board with its current id, bounds (the end is the next reset),
// its members (hot and cold) and how many periods are live in Redis or due for archive; with
// --archived, the archived periods of each (newest first), as the HTTP API's history route.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {
namespace {

void print_current_json(const std::string& board, const std::vector<service::PeriodStatus>& rows) {
  for (const auto& r : rows) {
    const bool has = !r.current.id.empty();
    std::cout << JsonLine()
                     .str("board", board)
                     .str("period", r.period)
                     .str("period_id", r.current.id)
                     .time("period_start",
                           has ? std::optional<Instant>(r.current.start) : std::nullopt)
                     .time("period_end", has ? std::optional<Instant>(r.current.end) : std::nullopt)
                     .num("members", r.current_members)
                     .num("hot_members", r.hot_members)
                     .num("cold_members", r.cold_members)
                     .num("live", r.live)
                     .num("due", r.due)
                     .done()
              << "\n";
  }
}

void print_current_text(const BoardConfig& c, const std::string& board,
                        const std::vector<service::PeriodStatus>& rows) {
  std::cout << board << " (" << c.timezone << ")\n";
  std::cout << std::left << std::setw(10) << "period" << std::setw(18) << "current" << std::setw(27)
            << "start" << std::setw(27) << "end (next reset)" << std::right << std::setw(10)
            << "members" << std::setw(10) << "of them" << std::setw(6) << "live" << std::setw(6)
            << "due"
            << "\n";
  for (const auto& r : rows) {
    const bool has = !r.current.id.empty();
    std::cout << std::left << std::setw(10) << r.period << std::setw(18)
              << (has ? r.current.id : "-") << std::setw(27)
              << (has ? format_local(r.current.start, *c.zone) : "-") << std::setw(27)
              << (has ? format_local(r.current.end, *c.zone) : "-") << std::right << std::setw(10)
              << r.current_members << std::setw(10)
              << (r.cold_members > 0 ? std::to_string(r.cold_members) + " cold" : "")
              << std::setw(6) << r.live << std::setw(6) << r.due << "\n";
  }
}

void print_archived(bool json, const BoardConfig& c, const std::string& board,
                    const std::string& period, const service::ArchivedPage& page) {
  if (json) {
    for (const auto& p : page.periods) {
      std::cout << JsonLine()
                       .str("board", board)
                       .str("period", period)
                       .str("period_id", p.period_id)
                       .time("period_start", p.start)
                       .time("period_end", p.end)
                       .num("members", p.members)
                       .time("archived_at", p.archived_at)
                       .raw("tiers", p.tiers.value_or("null"))
                       .done()
                << "\n";
    }
    return;
  }
  std::cout << board << " " << period << " (" << c.timezone << "): archived, newest first\n";
  if (page.periods.empty()) std::cout << "  (none)\n";
  if (page.periods.empty()) return;
  std::cout << std::left << std::setw(18) << "period_id" << std::setw(27) << "start"
            << std::setw(27) << "end" << std::right << std::setw(10) << "members"
            << "  archived_at"
            << (std::any_of(page.periods.begin(), page.periods.end(),
                            [](const auto& p) { return p.tiers.has_value(); })
                    ? "                tiers\n"
                    : "\n");
  for (const auto& p : page.periods) {
    std::cout << std::left << std::setw(18) << p.period_id << std::setw(27)
              << format_local(p.start, *c.zone) << std::setw(27) << format_local(p.end, *c.zone)
              << std::right << std::setw(10) << p.members << "  " << format_rfc3339(p.archived_at)
              << (p.tiers ? "  " + *p.tiers : std::string()) << "\n";
  }
  if (page.next) std::cout << "  (more: --period " << period << " --before " << *page.next << ")\n";
}

int archived(Context& ctx, const PeriodsArgs& args, const BoardConfig& c) {
  check_range("-n", args.n, 1, service::kMaxReadRows);
  if (args.before && !args.period) throw UsageError("--before needs --period (which period kind)");
  std::vector<std::string> kinds;
  if (args.period) kinds.push_back(*args.period);
  if (!args.period) {
    for (const PeriodSpec& p : c.periods) kinds.push_back(p.name);
  }
  service::Reads& reads = ctx.reads();
  for (const std::string& kind : kinds) {
    print_archived(ctx.format() == Format::json, c, args.board, kind,
                   reads.archived(args.board, kind, args.before, args.n));
  }
  return 0;
}

}  // namespace

int periods(Context& ctx, const PeriodsArgs& args) {
  const BoardConfig& c = service::board_entry(ctx.config(), args.board);
  if (args.archived) return archived(ctx, args, c);
  if (args.period || args.before) {
    throw UsageError("--period and --before go with --archived");
  }
  const auto rows = ctx.leaderboards().reads().periods(args.board);
  if (ctx.format() == Format::json) {
    print_current_json(args.board, rows);
  } else {
    print_current_text(c, args.board, rows);
  }
  return 0;
}

}  // namespace bk::cli
