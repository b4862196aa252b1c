// top: the best N of a period, from any offset; an ended period from its history once
// archived (the HTTP API's reads).
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int top(Context& ctx, const ReadArgs& args) {
  check_range("-n", args.n, 1, service::kMaxReadRows,
              "read a long listing page by page with --offset");
  check_range("--offset", args.offset, 0, service::kMaxReadOffset);
  service::Reads& reads = ctx.reads();
  const service::PeriodView view = reads.locate(args.board, args.period, args.period_id);
  print_standings(std::cout, ctx.format() == Format::json, view.ref,
                  reads.top_at(view, args.offset, args.n));
  return 0;
}

}  // namespace bk::cli
