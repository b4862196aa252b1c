// tick: one lifecycle pass; prints what it did per board and returns 1 if any board failed.
#include "lifecycle/tick.h"

#include <spdlog/spdlog.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int tick(Context& ctx, bool dry_run, std::int64_t chunk) {
  lifecycle::Tick t(ctx.config(), ctx.redis(), ctx.cold(), ctx.archive(), ctx.clock());
  const lifecycle::TickReport report = t.run({dry_run, chunk});
  const bool json = ctx.format() == Format::json;
  std::int64_t spilled = 0, ttl_fixed = 0, periods = 0, archived = 0, rows = 0, lost = 0;
  for (const auto& b : report.boards) {
    for (const auto& p : b.periods) {
      ++periods;
      spilled += p.spilled;
      ttl_fixed += p.ttl_fixed;
      archived += p.archived ? 1 : 0;
      rows += p.archived_rows;
      lost += p.lost ? 1 : 0;
      if (json) {
        std::cout << JsonLine()
                         .str("board", b.board)
                         .str("period", p.period)
                         .str("period_id", p.period_id)
                         .num("hot_before", p.hot_before)
                         .num("spilled", p.spilled)
                         .num("kept_in_place", p.kept_in_place)
                         .num("ttl_fixed", p.ttl_fixed)
                         .num("archived_rows", p.archived_rows)
                         .num("lost", p.lost ? 1 : 0)
                         .str("note", p.note)
                         .done()
                  << "\n";
      }
    }
    if (json) {
      if (!b.error.empty()) {
        std::cout << JsonLine().str("board", b.board).str("error", b.error).done() << "\n";
      }
      continue;
    }
    std::cout << b.board << (b.error.empty() ? "" : "  FAILED: " + b.error) << "\n";
    for (const auto& p : b.periods) {
      std::cout << "  " << p.period << " " << p.period_id << ": ";
      if (!p.note.empty()) {
        std::cout << p.note;
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
  // The report is complete on stdout before the summary goes to stderr, so the two never
  // interleave mid-line when both go to one file.
  std::cout.flush();
  spdlog::info(
      "tick{}: {} boards, {} periods, {} members spilled, {} periods archived ({} rows), {} lost, "
      "{} TTLs fixed{}",
      dry_run ? " (dry run)" : "", report.boards.size(), periods, spilled, archived, rows, lost,
      ttl_fixed, report.any_failed() ? ", some boards FAILED" : "");
  return report.any_failed() ? static_cast<int>(ExitCode::failed) : 0;
}

}  // namespace bk::cli
