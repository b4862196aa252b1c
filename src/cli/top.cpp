// top: the best N of a period, from any offset.
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int top(Context& ctx, const ReadArgs& args) {
  if (args.n < 1) throw UsageError("-n must be at least 1");
  if (args.offset < 0) throw UsageError("--offset must not be negative");
  auto& boards = ctx.leaderboards();
  const service::PeriodRef ref = boards.resolve(args.board, args.period, args.period_id);
  print_standings(std::cout, ctx.format() == Format::json, ref,
                  boards.top(ref, args.offset, args.n));
  return 0;
}

}  // namespace bk::cli
