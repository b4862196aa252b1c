// erase: the right to erasure (service::Moderation::erase): per board and period what went,
// or "nothing left to erase"; with --json the Erasure as one JSON object.
#include <iostream>
#include <string>

#include "api/admin.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {
namespace {

std::string board_json(const service::BoardErasure& b) {
  std::string periods = "[";
  for (const auto& p : b.periods)
    periods += (periods.size() > 1 ? "," : "") + api::period_removal_json(p);
  return JsonLine()
      .str("board", b.board)
      .raw("periods", periods + "]")
      .num("profiles", b.profiles)
      .num("bans", b.bans)
      .num("held", b.held)
      .done();
}

void print_json(const service::Erasure& e) {
  std::string boards = "[";
  for (const auto& b : e.boards) boards += (boards.size() > 1 ? "," : "") + board_json(b);
  std::cout << JsonLine()
                   .str("member_hash", e.member_hash)
                   .flag("dry_run", e.dry_run)
                   .raw("boards", boards + "]")
                   .num("dead_letters", e.dead_letters)
                   .num("earlier_requests", e.earlier_requests)
                   .num("total", e.total())
                   .done()
            << "\n";
}

void print_text(const service::Erasure& e) {
  const std::string verb = e.dry_run ? "would remove" : "removed";
  for (const auto& b : e.boards) {
    for (const auto& p : b.periods) {
      std::cout << b.board << " " << p.period << " " << p.period_id
                << (p.archived ? " (archived)" : "") << ": " << verb << " " << p.hot << " hot, "
                << p.cold << " cold, " << p.history << " history\n";
    }
    if (b.profiles + b.bans + b.held > 0) {
      std::cout << b.board << ": " << verb << " " << b.profiles << " profile fields, " << b.bans
                << " bans, " << b.held << " held\n";
    }
  }
  if (e.dead_letters > 0) std::cout << "dead letters: " << verb << " " << e.dead_letters << "\n";
  if (e.total() == 0) std::cout << "nothing left to erase\n";
  if (e.total() > 0) std::cout << "total: " << verb << " " << e.total() << "\n";
  std::cout << "audit: member hash " << e.member_hash << ", earlier requests " << e.earlier_requests
            << (e.dry_run ? " (dry run: not recorded)" : "") << "\n";
}

}  // namespace

int erase(Context& ctx, const EraseArgs& args) {
  service::EraseOptions options;
  options.boards = args.boards;
  options.dry_run = args.dry_run;
  const service::Erasure e = ctx.leaderboards().moderation().erase(args.member, options);
  if (ctx.format() == Format::json) {
    print_json(e);
  } else {
    print_text(e);
  }
  return 0;
}

}  // namespace bk::cli
