// The admin routes (api/admin.h): DELETE /v1/boards/{b}/{period}/members/{m}, PUT and
// DELETE /v1/boards/{b}/bans/{m}, GET /v1/boards/{b}/bans.
#include "api/admin.h"

#include <nlohmann/json.hpp>

#include "api/request_parts.h"
#include "api/split.h"
#include "core/json.h"
#include "core/percent.h"
#include "core/validate.h"

namespace bk::api {
namespace {

// The reason of a ban's body: none (empty body), or {"reason": "..."} and nothing else.
std::string reason_of(const std::string& body) {
  if (body.size() > kMaxAdminBody) {
    throw HttpError{413, "the body is larger than " + std::to_string(kMaxAdminBody) + " bytes"};
  }
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return "";
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded()) bad("the body is not valid JSON (UTF-8): send {\"reason\": \"...\"}");
  if (!doc.is_object()) bad("the body must be a JSON object: {\"reason\": \"...\"}");
  for (const auto& [key, value] : doc.items()) {
    if (key != "reason") bad("unknown field " + json_string(key) + " (known: reason)");
    if (!value.is_string()) bad("reason must be a string");
  }
  const std::string reason = doc.value("reason", "");
  if (reason.size() > kMaxReasonBytes) {
    bad("reason is " + std::to_string(reason.size()) + " bytes; at most " +
        std::to_string(kMaxReasonBytes));
  }
  return reason;
}

}  // namespace

std::string remove_member(std::string_view query, const std::string& board,
                          const std::string& period, const std::string& member,
                          service::Leaderboards& boards) {
  const auto params = parameters(query, {"period_id", "all"});
  bool all = false;
  if (const auto it = params.find("all"); it != params.end()) {
    const std::string value = decode(it->second, true, "all");
    if (value != "true" && value != "false")
      bad("all must be true or false, not " + bk::quoted(value));
    all = value == "true";
  }
  const std::optional<std::string> id = period_id(params);
  if (all && id) bad("give period_id or all=true, not both");
  const BoardConfig& c = service::board_entry(boards.config(), board);
  service::period_spec(c, board, period);  // an unknown period is a 404 even with all=true
  service::Moderation& m = boards.moderation();
  return removal_json(board, member,
                      all ? m.remove(board, member) : m.remove(board, member, period, id));
}

std::string ban_member(const Request& request, const std::string& board, const std::string& member,
                       service::Leaderboards& boards) {
  const std::string reason = reason_of(request.body);
  service::board_entry(boards.config(), board);
  const service::BanResult r = boards.moderation().ban(board, member, reason);
  return ban_result_json(board, member, reason, r);
}

std::string list_bans(const std::string& board, service::Leaderboards& boards) {
  service::board_entry(boards.config(), board);
  std::string list = "[";
  for (const service::BanRecord& b : boards.moderation().bans(board)) {
    if (list.size() > 1) list += ',';
    list += ban_record_json(b);
  }
  return JsonLine().str("board", board).raw("bans", list + "]").done();
}

std::string unban_member(const Request& request, const std::string& board,
                         const std::string& member, service::Leaderboards& boards) {
  if (!request.body.empty()) bad("a DELETE request carries no body");
  service::board_entry(boards.config(), board);
  const bool unbanned = boards.moderation().unban(board, member);
  return JsonLine().str("board", board).str("member", member).flag("unbanned", unbanned).done();
}

std::string period_removal_json(const service::PeriodRemoval& p) {
  return JsonLine()
      .str("board", p.board)
      .str("period", p.period)
      .str("period_id", p.period_id)
      .flag("archived", p.archived)
      .num("hot", p.hot)
      .num("cold", p.cold)
      .num("history", p.history)
      .done();
}

std::string removed_periods_json(const std::vector<service::PeriodRemoval>& periods) {
  std::string list = "[";
  for (const service::PeriodRemoval& p : periods) {
    if (p.total() == 0) continue;
    if (list.size() > 1) list += ',';
    list += period_removal_json(p);
  }
  return list + "]";
}

std::string removal_json(const std::string& board, const std::string& member,
                         const service::Removal& r) {
  return JsonLine()
      .str("board", board)
      .str("member", member)
      .flag("removed", r.found())
      .raw("periods", removed_periods_json(r.periods))
      .done();
}

std::string ban_result_json(const std::string& board, const std::string& member,
                            const std::string& reason, const service::BanResult& r) {
  return JsonLine()
      .str("board", board)
      .str("member", member)
      .flag("newly_banned", r.newly_banned)
      .str("reason", reason)
      .raw("removed", removal_json(board, member, r.removed))
      .done();
}

std::string ban_record_json(const service::BanRecord& b) {
  return JsonLine()
      .str("board", b.board)
      .str("member", b.member)
      .str("reason", b.reason)
      .time("banned_at", b.banned_at)
      .done();
}

}  // namespace bk::api
