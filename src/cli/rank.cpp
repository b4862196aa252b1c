// rank: one member's standing; exit 1 when the member is not on the board.
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int rank(Context& ctx, const ReadArgs& args) {
  auto& boards = ctx.leaderboards();
  const service::PeriodRef ref = boards.resolve(args.board, args.period, args.period_id);
  const auto standing = boards.rank(ref, args.member);
  if (!standing) {
    std::cerr << "member '" << printable(args.member) << "' is not on " << args.board << " "
              << ref.spec->name << " " << ref.period.id << "\n";
    return 1;
  }
  print_standings(std::cout, ctx.format() == Format::json, ref, {*standing});
  return 0;
}

}  // namespace bk::cli
