// around: a member with K neighbours on each side; exit 1 when the member is not on it.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int around(Context& ctx, const ReadArgs& args) {
  check_range("-k", args.k, 0, service::kMaxReadRows / 2);
  auto& boards = ctx.leaderboards();
  const service::PeriodRef ref = boards.resolve(args.board, args.period, args.period_id);
  const auto rows = boards.around(ref, args.member, args.k);
  if (rows.empty()) {
    std::cerr << "member '" << printable(args.member) << "' is not on " << args.board << " "
              << ref.spec->name << " " << ref.period.id << "\n";
    return 1;
  }
  print_standings(std::cout, ctx.format() == Format::json, ref, rows);
  return 0;
}

}  // namespace bk::cli
