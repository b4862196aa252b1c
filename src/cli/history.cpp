// history: an archived period from PostgreSQL, in the same forms as `top`.
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int history(Context& ctx, const ReadArgs& args) {
  if (args.n < 1) throw UsageError("-n must be at least 1");
  // PostgreSQL only: no Redis connection for reading history.
  const service::PeriodRef ref = service::resolve_period(ctx.config(), args.board, args.period,
                                                         args.period_id, ctx.clock().now());
  cold::Archive& archive = ctx.archive();
  const cold::PeriodKey key{args.board, ref.spec->name, ref.period.id};
  if (!archive.archived_period(key)) {
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
  std::vector<service::Standing> rows;
  for (const cold::HistoryRow& h : archive.history(key, args.n)) {
    rows.push_back({h.rank, h.member, h.points, h.achieved_at});
  }
  print_standings(std::cout, ctx.format() == Format::json, ref, rows);
  return 0;
}

}  // namespace bk::cli
