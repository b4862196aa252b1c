// periods: each period of a board with its current id, bounds (the end is the next reset),
// its members (hot and cold) and how many periods are live in Redis or due for archive.
#include <iomanip>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int periods(Context& ctx, const std::string& board) {
  auto& boards = ctx.leaderboards();
  const auto rows = boards.periods(board);
  const BoardConfig& c = service::board_entry(ctx.config(), board);
  if (ctx.format() == Format::json) {
    for (const auto& r : rows) {
      std::cout << JsonLine()
                       .str("board", board)
                       .str("period", r.period)
                       .str("period_id", r.current.id)
                       .time("period_start", r.current.id.empty()
                                                 ? std::nullopt
                                                 : std::optional<Instant>(r.current.start))
                       .time("period_end", r.current.id.empty()
                                               ? std::nullopt
                                               : std::optional<Instant>(r.current.end))
                       .num("members", r.current_members)
                       .num("hot_members", r.hot_members)
                       .num("cold_members", r.cold_members)
                       .num("live", r.live)
                       .num("due", r.due)
                       .done()
                << "\n";
    }
    return 0;
  }
  std::cout << board << " (" << c.timezone << ")\n";
  std::cout << std::left << std::setw(10) << "period" << std::setw(18) << "current" << std::setw(27)
            << "start" << std::setw(27) << "end (next reset)" << std::right << std::setw(10)
            << "members" << std::setw(10) << "of them" << std::setw(6) << "live" << std::setw(6)
            << "due"
            << "\n";
  for (const auto& r : rows) {
    const bool has = !r.current.id.empty();
    std::cout << std::left << std::setw(10) << r.period << std::setw(18)
              << (has ? r.current.id : "-") << std::setw(27)
              << (has ? format_local(r.current.start, *c.zone) : "-") << std::setw(27)
              << (has ? format_local(r.current.end, *c.zone) : "-") << std::right << std::setw(10)
              << r.current_members << std::setw(10)
              << (r.cold_members > 0 ? std::to_string(r.cold_members) + " cold" : "")
              << std::setw(6) << r.live << std::setw(6) << r.due << "\n";
  }
  return 0;
}

}  // namespace bk::cli
