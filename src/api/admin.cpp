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

// The board's bans routes are `bans` in the period's place (a period may not be named so).
bool is_bans(std::string_view segment) {
  const auto decoded = percent_decode(std::string(segment));
  return decoded && *decoded == "bans";
}

// The request's method must be one `allow` lists ("PUT, DELETE"), else a 405 with Allow.
void require(const Request& request, const char* allow) {
  for (const std::string_view m : split(allow, ',')) {
    if (m.substr(m.find_first_not_of(' ')) == request.method) return;
  }
  throw HttpError{405,
                  "method " + bk::quoted(request.method) + " is not allowed here (" + allow + ")",
                  {{"Allow", allow}}};
}

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

// DELETE /v1/boards/{b}/{period}/members/{m}[?period_id=ID | ?all=true]
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

}  // namespace

RouteShape shape_of(std::string_view method, std::string_view path) {
  const auto segs = split(path, '/');
  const std::size_t n = segs.size();
  const bool boards = n >= 5 && segs[0].empty() && segs[1] == "v1" && segs[2] == "boards";
  if (boards && n == 5 && is_bans(segs[4])) return {true, "GET, HEAD"};
  if (boards && n == 6 && is_bans(segs[4])) return {true, "PUT, DELETE"};
  if (boards && n == 7 && segs[5] == "members") return {method == "DELETE", "GET, HEAD, DELETE"};
  if (boards && n == 6 && segs[5] == "members") return {false, "GET, HEAD, POST"};
  return {};
}

std::optional<std::string> admin_answer(const Request& request,
                                        const std::vector<std::string_view>& segs,
                                        const std::string& board, std::string_view query,
                                        service::Leaderboards& boards, std::string& route) {
  const std::size_t n = segs.size();
  if (n == 5 && is_bans(segs[4])) {
    route = "bans";
    require(request, "GET, HEAD");
    parameters(query, {});
    return list_bans(board, boards);
  }
  if (n == 6 && is_bans(segs[4])) {
    route = request.method == "DELETE" ? "unban" : "ban";
    require(request, "PUT, DELETE");
    parameters(query, {});
    const std::string member = member_of(segs[5], false);
    if (request.method == "PUT") return ban_member(request, board, member, boards);
    if (!request.body.empty()) bad("a DELETE request carries no body");
    service::board_entry(boards.config(), board);
    const bool unbanned = boards.moderation().unban(board, member);
    return JsonLine().str("board", board).str("member", member).flag("unbanned", unbanned).done();
  }
  if (n == 7 && segs[5] == "members" && request.method == "DELETE") {
    route = "remove";
    const std::string period = decode(segs[4], false, "the period");
    return remove_member(query, board, period, member_of(segs[6], false), boards);
  }
  return std::nullopt;
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
