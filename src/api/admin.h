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

// The admin routes' answers (api/routes.h names them): `board` is decoded and valid, `member`
// decoded. Each throws HttpError (and the service's errors) like the read routes.
// GET /v1/boards/{b}/bans
std::string list_bans(const std::string& board, service::Leaderboards& boards);
// PUT /v1/boards/{b}/bans/{m}, body {"reason": "..."} or none
std::string ban_member(const Request& request, const std::string& board, const std::string& member,
                       service::Leaderboards& boards);
// DELETE /v1/boards/{b}/bans/{m}
std::string unban_member(const Request& request, const std::string& board,
                         const std::string& member, service::Leaderboards& boards);
// DELETE /v1/boards/{b}/{period}/members/{m}[?period_id=ID | ?all=true]
std::string remove_member(std::string_view query, const std::string& board,
                          const std::string& period, const std::string& member,
                          service::Leaderboards& boards);

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
