// add: one update applied to every period of the board, and what is printed for it.
#include "cli/add.h"

#include <charconv>
#include <iostream>

#include "api/write.h"
#include "cli/output.h"

namespace bk::cli {
namespace {

// {"status", "board", "member"}, the start of every JSON answer of add.
JsonLine answer(std::string_view status, const service::Update& u) {
  JsonLine line;
  line.str("status", status).str("board", u.board).str("member", u.member);
  return line;
}

std::string applied_text(const service::Update& u, const service::Written& w, bool json) {
  if (json) return api::written_json(u.board, u.member, w) + "\n";
  std::string text = "applied to " + u.board + " / " + printable(u.member) + ":";
  for (const auto& p : w.result.points) {
    text += "  " + p.period + " " + p.period_id + " = " + std::to_string(p.points);
  }
  return text + "\n";
}

// A lasting refusal (exit 1): the reason on stderr, and the JSON answer on stdout.
AddReport refusal(std::string_view status, const service::Update& u, const service::UpdateResult& r,
                  bool json) {
  AddReport report;
  if (json) report.out = answer(status, u).str("reason", r.reason).done() + "\n";
  report.err = std::string(status) + ": " + r.reason + "\n";
  report.exit_code = 1;
  return report;
}

}  // namespace

service::Update update_from(const AddArgs& args) {
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
  return u;
}

AddReport report_of(const service::Update& u, const service::Written& w, bool json) {
  const service::UpdateResult& r = w.result;
  switch (r.status) {
    case service::UpdateStatus::applied:
      return AddReport{applied_text(u, w, json), "", 0};
    case service::UpdateStatus::duplicate:
      return AddReport{json ? api::written_json(u.board, u.member, w) + "\n"
                            : "not applied again: " + r.reason + "\n",
                       "", 0};
    case service::UpdateStatus::refused:
      break;
    case service::UpdateStatus::failed:  // the board's keys refused it: lasting (exit 1)
      return refusal("failed", u, r, json);
    case service::UpdateStatus::unavailable:
    case service::UpdateStatus::waiting:  // only events with an order token (streams) wait
      throw UnavailableError(r.reason);
  }
  return refusal("refused", u, r, json);
}

int add(Context& ctx, const AddArgs& args) {
  const service::Update u = update_from(args);
  // A board no entry of the config covers is a configuration matter (exit 2), not a
  // refused event.
  service::board_entry(ctx.config(), u.board);
  // With --json, the member's standings too, as the HTTP write answers them.
  const bool json = ctx.format() == Format::json;
  const service::Written w =
      json ? ctx.leaderboards().write(u) : service::Written{ctx.leaderboards().apply(u), {}};
  const AddReport report = report_of(u, w, json);
  std::cout << report.out;
  std::cerr << report.err;
  return report.exit_code;
}

}  // namespace bk::cli
