// top: the best N of a period, from any offset.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int top(Context& ctx, const ReadArgs& args) {
  if (args.n < 1 || args.n > service::kMaxReadRows) {
    throw UsageError("-n " + std::to_string(args.n) + " is outside [1, " +
                     std::to_string(service::kMaxReadRows) +
                     "]: read a long listing page by page with --offset");
  }
  if (args.offset < 0 || args.offset > service::kMaxReadOffset) {
    throw UsageError("--offset " + std::to_string(args.offset) + " is outside [0, " +
                     std::to_string(service::kMaxReadOffset) + "]");
  }
  auto& boards = ctx.leaderboards();
  const service::PeriodRef ref = boards.resolve(args.board, args.period, args.period_id);
  print_standings(std::cout, ctx.format() == Format::json, ref,
                  boards.top(ref, args.offset, args.n));
  return 0;
}

}  // namespace bk::cli
