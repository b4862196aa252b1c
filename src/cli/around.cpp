// around: a member with K neighbours on each side (an ended period's from its history once
// archived); exit 1 when the member is not on the board.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int around(Context& ctx, const ReadArgs& args) {
  check_range("-k", args.k, 0, service::kMaxReadRows / 2);
  service::Reads& reads = ctx.reads();
  const service::PeriodView view = reads.locate(args.board, args.period, args.period_id);
  const auto rows = reads.around(view, args.member, args.k);
  if (rows.empty()) {
    print_not_on(args.member, view.ref);
    return 1;
  }
  print_standings(std::cout, ctx.format() == Format::json, view.ref, rows);
  return 0;
}

}  // namespace bk::cli
