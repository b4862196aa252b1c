// rank: one member's standing (an ended period's from its history once archived); exit 1
// when the member is not on the board. On a league board: its cohort (cohort.cpp).
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int rank(Context& ctx, const ReadArgs& args) {
  service::Reads& reads = ctx.reads();
  const service::PeriodView view = reads.locate(args.board, args.period, args.period_id);
  if (view.ref.config->league) return cohort(ctx, args);  // its rank is its cohort's
  const auto standing = reads.member(view, args.member);
  if (!standing) {
    print_not_on(args.member, view.ref);
    return 1;
  }
  print_standings(std::cout, ctx.format() == Format::json, view.ref, {*standing});
  return 0;
}

}  // namespace bk::cli
