// cohort: a member's cohort on a league board (service/cohorts.h), live or archived, each row
// with its zone; exit 1 when the member has no cohort in the period.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/json.h"

namespace bk::cli {

int cohort(Context& ctx, const ReadArgs& args) {
  service::Reads& reads = ctx.reads();
  const service::PeriodView view = reads.locate(args.board, args.period, args.period_id);
  service::Cohort c;
  try {
    c = reads.cohort_of(view, args.member);
  } catch (const service::NothingToReadError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  const service::PeriodRef& ref = view.ref;
  if (ctx.format() == Format::json) {
    for (const service::CohortRow& r : c.rows) {
      std::cout << JsonLine()
                       .str("board", ref.board)
                       .str("period", ref.spec->name)
                       .str("period_id", ref.period.id)
                       .str("cohort", c.cohort)
                       .num("rank", r.rank)
                       .str("member", r.member)
                       .num("points", r.points)
                       .str("zone", zone_name(r.zone))
                       .done()
                << "\n";
    }
    return 0;
  }
  std::cout << ref.board << " " << ref.spec->name << " " << ref.period.id << "  cohort " << c.cohort
            << (c.archived ? " (archived: the moves the close made)" : "") << "\n"
            << "  rank  member                points  zone\n";
  for (const service::CohortRow& r : c.rows) {
    std::cout << std::setw(6) << r.rank << "  " << std::left << std::setw(20) << printable(r.member)
              << std::right << std::setw(8) << r.points << "  " << zone_name(r.zone)
              << (r.member == args.member ? "  <" : "") << "\n";
  }
  return 0;
}

}  // namespace bk::cli
