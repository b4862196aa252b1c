// remove, ban, unban, bans, reset, drop (service/moderation.h): each says what it removed per
// board and period, as text or (--json) as the HTTP API's admin routes answer.
#include <iomanip>
#include <iostream>

#include "api/admin.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "core/validate.h"

namespace bk::cli {
namespace {

bool json_out(const Context& ctx) {
  return ctx.format() == Format::json;
}

service::Moderation& moderation(Context& ctx) {
  return ctx.leaderboards().moderation();
}

// The board must be one the config covers and the member a valid id: usage errors (exit 2)
// before anything connects.
void check_target(const Context& ctx, const ModerationArgs& args, bool member) {
  service::board_entry(ctx.config(), args.board);
  if (!member) return;
  if (auto problem = member_problem(args.member)) {
    throw UsageError(args.member.size() > kMaxMemberBytes
                         ? *problem
                         : "member " + bk::quoted(args.member) + ": " + *problem);
  }
}

void require_yes(const ModerationArgs& args, const std::string& what) {
  if (!args.yes) {
    throw UsageError(what + " cannot be undone: add --yes to confirm (" + what +
                     " without --yes changes nothing)");
  }
}

// "points daily 2026-11-22" ("... (archived)" for a period in history).
std::string period_text(const service::PeriodRemoval& p) {
  return p.board + " " + p.period + " " + p.period_id + (p.archived ? " (archived)" : "");
}

std::string counts_text(const service::PeriodRemoval& p) {
  return "hot " + std::to_string(p.hot) + ", cold " + std::to_string(p.cold) + ", history " +
         std::to_string(p.history);
}

// One line per period that held something: "removed alice from points daily 2026-11-22: hot
// 1, cold 0, history 0".
void print_removed(const std::string& member, const std::vector<service::PeriodRemoval>& periods) {
  for (const service::PeriodRemoval& p : periods) {
    if (p.total() == 0) continue;
    std::cout << "removed " << printable(member) << " from " << period_text(p) << ": "
              << counts_text(p) << "\n";
  }
}

}  // namespace

int remove(Context& ctx, const ModerationArgs& args) {
  check_target(ctx, args, true);
  if (args.period_id && !args.period) throw UsageError("--period-id needs --period");
  if (args.period)
    service::period_spec(service::board_entry(ctx.config(), args.board), args.board, *args.period);
  const service::Removal r =
      moderation(ctx).remove(args.board, args.member, args.period, args.period_id);
  if (json_out(ctx)) {
    std::cout << api::removal_json(args.board, args.member, r) << "\n";
  } else {
    print_removed(args.member, r.periods);
  }
  if (r.found()) return 0;
  std::cerr << "member " << bk::quoted(args.member) << " is not on the board " << args.board
            << (args.period ? " " + *args.period + (args.period_id ? " " + *args.period_id : "")
                            : std::string())
            << ": nothing removed\n";
  return 1;
}

int ban(Context& ctx, const ModerationArgs& args) {
  check_target(ctx, args, true);
  if (args.reason.size() > api::kMaxReasonBytes || valid_utf8(args.reason) != args.reason) {
    throw UsageError("--reason must be valid UTF-8 of at most " +
                     std::to_string(api::kMaxReasonBytes) + " bytes");
  }
  const service::BanResult r = moderation(ctx).ban(args.board, args.member, args.reason);
  if (json_out(ctx)) {
    std::cout << api::ban_result_json(args.board, args.member, args.reason, r) << "\n";
    return 0;
  }
  const std::string who = printable(args.member);
  std::cout << (r.newly_banned ? "banned " + who + " from " + args.board
                               : who + " was banned from " + args.board + " already")
            << (args.reason.empty() ? "" : " (reason: " + printable(args.reason) + ")") << "\n";
  print_removed(args.member, r.removed.periods);
  return 0;
}

int unban(Context& ctx, const ModerationArgs& args) {
  check_target(ctx, args, true);
  const bool unbanned = moderation(ctx).unban(args.board, args.member);
  if (json_out(ctx)) {
    std::cout << JsonLine()
                     .str("board", args.board)
                     .str("member", args.member)
                     .flag("unbanned", unbanned)
                     .done()
              << "\n";
  } else {
    std::cout << (unbanned ? "unbanned " : "was not banned: ") << printable(args.member) << " on "
              << args.board << "\n";
  }
  return 0;
}

int bans(Context& ctx, const ModerationArgs& args) {
  check_target(ctx, args, false);
  const std::vector<service::BanRecord> list = moderation(ctx).bans(args.board);
  if (json_out(ctx)) {
    for (const service::BanRecord& b : list) std::cout << api::ban_record_json(b) << "\n";
    return 0;
  }
  std::cout << args.board << ": " << list.size() << (list.size() == 1 ? " ban" : " bans") << "\n";
  std::size_t width = 6;
  for (const service::BanRecord& b : list) width = std::max(width, printable(b.member).size());
  if (!list.empty()) {
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << "member" << std::setw(26)
              << "banned_at"
              << "reason\n";
  }
  for (const service::BanRecord& b : list) {
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << printable(b.member)
              << std::setw(26) << format_rfc3339(b.banned_at) << printable(b.reason) << "\n";
  }
  return 0;
}

int reset(Context& ctx, const ModerationArgs& args) {
  require_yes(args, "reset");
  check_target(ctx, args, false);
  service::period_spec(service::board_entry(ctx.config(), args.board), args.board,
                       args.period.value_or(""));
  const service::Reset r = moderation(ctx).reset(args.board, *args.period, args.period_id);
  if (json_out(ctx)) {
    std::cout << api::period_removal_json(r) << "\n";
  } else {
    std::cout << "reset " << period_text(r) << ": " << counts_text(r) << "\n";
  }
  return 0;
}

int drop(Context& ctx, const ModerationArgs& args) {
  require_yes(args, "drop");
  check_target(ctx, args, false);
  const service::Drop d = moderation(ctx).drop(args.board, args.history);
  if (json_out(ctx)) {
    std::cout << JsonLine()
                     .str("board", d.board)
                     .flag("history", d.history)
                     .raw("periods", api::removed_periods_json(d.periods))
                     .num("profiles", d.profiles)
                     .num("keys", d.keys)
                     .done()
              << "\n";
    return 0;
  }
  for (const service::PeriodRemoval& p : d.periods) {
    if (p.total() > 0) std::cout << "dropped " << period_text(p) << ": " << counts_text(p) << "\n";
  }
  std::cout << "dropped " << args.board << (d.history ? " with its archived history" : "")
            << ": profiles " << d.profiles << ", other keys " << d.keys
            << (d.total() == 0 ? " (nothing was left)" : "") << "\n";
  return 0;
}

}  // namespace bk::cli
