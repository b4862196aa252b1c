// The admin routes of the HTTP API (docs/http-api.md, "Admin routes"): take a member off a
// board, ban and unban it, list a board's bans (service::Moderation). They need an admin
// token (Api checks it before anything else); erase is not among them (an operator's
// decision: the CLI and the library only). Also the JSON of moderation results, which the
// CLI's --json prints too.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/api.h"
#include "service/leaderboards.h"
#include "service/moderation.h"

namespace bk::api {

inline constexpr std::size_t kMaxAdminBody = 4096;   // bytes of a PUT .../bans/{m} body
inline constexpr std::size_t kMaxReasonBytes = 512;  // bytes of a ban's reason

// What a /v1 path (still percent-encoded, no query) asks of its caller: an admin token or a
// read token, and the methods it takes (the Allow header of a 405).
struct RouteShape {
  bool admin = false;
  const char* allow = "GET, HEAD";
};
RouteShape shape_of(std::string_view method, std::string_view path);

// The admin route a request names, answered (its route name for metrics in `route`):
// nullopt when the request is not an admin route (a read: api.cpp answers it). `segs` are
// the path's segments ("", "v1", "boards", board, ...), `board` the decoded, valid board.
// Throws HttpError (and the service's errors) like the read routes.
std::optional<std::string> admin_answer(const Request& request,
                                        const std::vector<std::string_view>& segs,
                                        const std::string& board, std::string_view query,
                                        service::Leaderboards& boards, std::string& route);

// {"board", "period", "period_id", "archived", "hot", "cold", "history"}
std::string period_removal_json(const service::PeriodRemoval& p);
// [period_removal_json, ...] of the periods that held something (total() > 0)
std::string removed_periods_json(const std::vector<service::PeriodRemoval>& periods);
// {"board", "member", "removed": found(), "periods": removed_periods_json}
std::string removal_json(const std::string& board, const std::string& member,
                         const service::Removal& r);
// {"board", "member", "newly_banned", "reason", "removed": removal_json}
std::string ban_result_json(const std::string& board, const std::string& member,
                            const std::string& reason, const service::BanResult& r);
// {"board", "member", "reason", "banned_at"}
std::string ban_record_json(const service::BanRecord& b);

}  // namespace bk::api
