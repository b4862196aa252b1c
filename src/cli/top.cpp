// top: the best N of a period, from any offset.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int top(Context& ctx, const ReadArgs& args) {
  check_range("-n", args.n, 1, service::kMaxReadRows,
              "read a long listing page by page with --offset");
  check_range("--offset", args.offset, 0, service::kMaxReadOffset);
  auto& boards = ctx.leaderboards();
  const service::PeriodRef ref = boards.resolve(args.board, args.period, args.period_id);
  print_standings(std::cout, ctx.format() == Format::json, ref,
                  boards.top(ref, args.offset, args.n));
  return 0;
}

}  // namespace bk::cli
