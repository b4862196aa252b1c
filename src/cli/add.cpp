// add: one update applied to every period of the board.
#include <charconv>
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {

int add(Context& ctx, const AddArgs& args) {
  service::Update u;
  u.board = args.board;
  u.member = args.member;
  u.event_id = args.event_id;
  u.name = args.name;
  u.meta = args.meta;
  const auto res =
      std::from_chars(args.value.data(), args.value.data() + args.value.size(), u.value);
  if (args.value.empty() || res.ec != std::errc{} ||
      res.ptr != args.value.data() + args.value.size()) {
    throw UsageError("value '" + args.value + "' is not a whole number");
  }
  if (args.at) {
    const auto at = parse_rfc3339(*args.at);
    if (!at)
      throw UsageError("--at '" + *args.at + "' is not an RFC 3339 time (2026-11-22T14:03:00Z)");
    u.at = at;
  }
  // A board no entry of the config covers is a configuration matter (exit 2), not a
  // refused event.
  service::board_entry(ctx.config(), u.board);
  const service::UpdateResult r = ctx.leaderboards().apply(u);
  const bool json = ctx.format() == Format::json;
  switch (r.status) {
    case service::UpdateStatus::applied:
      if (json) {
        std::string points = "[";
        for (const auto& p : r.points) {
          points += (points.size() > 1 ? "," : "") + JsonLine()
                                                         .str("period", p.period)
                                                         .str("period_id", p.period_id)
                                                         .num("points", p.points)
                                                         .done();
        }
        std::cout << JsonLine()
                         .str("status", "applied")
                         .str("board", u.board)
                         .str("member", u.member)
                         .raw("periods", points + "]")
                         .done()
                  << "\n";
      } else {
        std::cout << "applied to " << u.board << " / " << printable(u.member) << ":";
        for (const auto& p : r.points) {
          std::cout << "  " << p.period << " " << p.period_id << " = " << p.points;
        }
        std::cout << "\n";
      }
      return 0;
    case service::UpdateStatus::duplicate:
      if (json) {
        std::cout << JsonLine()
                         .str("status", "duplicate")
                         .str("board", u.board)
                         .str("member", u.member)
                         .done()
                  << "\n";
      } else {
        std::cout << "not applied again: " << r.reason << "\n";
      }
      return 0;
    case service::UpdateStatus::refused:
      break;
    case service::UpdateStatus::failed:  // the board's keys refused it: lasting (exit 1)
      if (json) {
        std::cout << JsonLine()
                         .str("status", "failed")
                         .str("board", u.board)
                         .str("member", u.member)
                         .str("reason", r.reason)
                         .done()
                  << "\n";
      }
      std::cerr << "failed: " << r.reason << "\n";
      return 1;
    case service::UpdateStatus::unavailable:
    case service::UpdateStatus::waiting:  // only events with an order token (streams) wait
      throw UnavailableError(r.reason);
  }
  if (json) {
    std::cout << JsonLine()
                     .str("status", "refused")
                     .str("board", u.board)
                     .str("member", u.member)
                     .str("reason", r.reason)
                     .done()
              << "\n";
  }
  std::cerr << "refused: " << r.reason << "\n";
  return 1;
}

}  // namespace bk::cli
