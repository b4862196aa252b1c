// history: an archived period from PostgreSQL, in the same forms as `top`.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int history(Context& ctx, const ReadArgs& args) {
  if (args.n < 1 || args.n > service::kMaxReadOffset) {
    throw UsageError("-n " + std::to_string(args.n) + " is outside [1, " +
                     std::to_string(service::kMaxReadOffset) + "]");
  }
  // PostgreSQL only: no Redis connection for reading history.
  const service::PeriodRef ref = service::resolve_period(ctx.config(), args.board, args.period,
                                                         args.period_id, ctx.clock().now());
  cold::Archive& archive = ctx.archive();
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
  // Page by page along the listing index: memory and the cost of each page stay flat
  // however many rows are asked for.
  StandingsPrinter printer(std::cout, ctx.format() == Format::json, ref);
  constexpr std::int64_t kPage = 10000;
  std::vector<service::Standing> rows;
  for (std::int64_t done = 0, after = 0; done < args.n;) {
    const auto page = archive.history_page(key, after, std::min(kPage, args.n - done));
    if (page.empty()) break;
    rows.clear();
    for (const cold::HistoryRow& h : page)
      rows.push_back({h.rank, h.member, h.points, h.achieved_at});
    printer.page(rows);
    done += static_cast<std::int64_t>(page.size());
    after = page.back().position;
  }
  printer.finish();
  return 0;
}

}  // namespace bk::cli
