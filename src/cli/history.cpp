// history: an archived period from PostgreSQL, in the same forms as `top`.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int history(Context& ctx, const ReadArgs& args) {
  check_range("-n", args.n, 1, service::kMaxReadOffset);
  // PostgreSQL only: no Redis connection for reading history.
  const service::PeriodRef ref = service::resolve_period(ctx.config(), args.board, args.period,
                                                         args.period_id, ctx.clock().now());
  cold::History& archive = ctx.archive();
  const cold::PeriodKey key{args.board, ref.spec->name, ref.period.id};
  const auto archived = archive.archived_period(key);
  if (archived && archived->pruned_at) {
    std::cerr << args.board << " " << ref.spec->name << " " << ref.period.id
              << " was archived, but its rows were removed on "
              << format_rfc3339(*archived->pruned_at)
              << " (history.retention); its counts are in the periods table\n";
    return 1;
  }
  if (!archived) {
    std::cerr << args.board << " " << ref.spec->name << " " << ref.period.id
              << " is not archived (yet): ";
    switch (archive.status(key)) {
      case cold::PeriodStatus::lost:
        std::cerr << "it was recorded as lost (its hot key vanished before archive)\n";
        break;
      default:
        std::cerr << "it is still open or due; `top` reads it live\n";
    }
    return 1;
  }
  StandingsPrinter printer(std::cout, ctx.format() == Format::json, ref);
  std::vector<service::Standing> rows;
  archive.history_pages(key, args.n, [&](const std::vector<cold::HistoryRow>& page) {
    rows.clear();
    for (const cold::HistoryRow& h : page) {
      rows.push_back({h.rank, h.member, h.points, h.achieved_at, h.name, h.metadata});
      rows.back().tier = h.tier;
    }
    printer.page(rows);
  });
  printer.finish();
  return 0;
}

}  // namespace bk::cli
