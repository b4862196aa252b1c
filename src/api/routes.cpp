// The route table (api/routes.h).
#include "api/routes.h"

#include <optional>

#include "api/split.h"
#include "core/json.h"
#include "core/percent.h"

namespace bk::api {
namespace {

using R = RouteId;
using M = Method;
constexpr RouteEntry kRoutes[] = {
    {R::boards, "boards", M::get, "boards", Access::read, Lane::redis},
    {R::periods, "periods", M::get, "boards/{board}/periods", Access::read, Lane::postgres},
    {R::bans, "bans", M::get, "boards/{board}/bans", Access::admin, Lane::postgres},
    {R::ban, "ban", M::put, "boards/{board}/bans/{member}", Access::admin, Lane::postgres},
    {R::unban, "unban", M::del, "boards/{board}/bans/{member}", Access::admin, Lane::postgres},
    {R::score, "write", M::post, "boards/{board}/members/{member}/scores", Access::write,
     Lane::redis},
    {R::top, "top", M::get, "boards/{board}/{period}/top", Access::read, Lane::redis},
    {R::history, "history", M::get, "boards/{board}/{period}/history", Access::read,
     Lane::postgres},
    {R::members, "members", M::get, "boards/{board}/{period}/members", Access::read,
     Lane::postgres},
    {R::members_post, "members", M::post, "boards/{board}/{period}/members", Access::read,
     Lane::postgres},
    {R::member, "member", M::get, "boards/{board}/{period}/members/{member}", Access::read,
     Lane::redis},
    {R::remove, "remove", M::del, "boards/{board}/{period}/members/{member}", Access::admin,
     Lane::postgres},
    {R::around, "around", M::get, "boards/{board}/{period}/members/{member}/around", Access::read,
     Lane::redis},
    {R::cohort, "cohort", M::get, "boards/{board}/{period}/members/{member}/cohort", Access::read,
     Lane::redis},
    {R::cohort_top, "cohort_top", M::get, "boards/{board}/{period}/cohorts/{cohort}/top",
     Access::read, Lane::redis},
    // Each event's board is checked against the write token's scope when the body is read.
    {R::events, "events", M::post, "events", Access::write, Lane::redis},
};

// Whether `segs` (after /v1/) fit `pattern`, naming what its placeholders took. A literal is
// compared decoded ("%74op" is "top"), so `bans` can never be taken for a period.
bool fits(std::string_view pattern, const std::vector<std::string_view>& segs, Matched& m) {
  const auto want = split(pattern, '/');
  if (want.size() != segs.size()) return false;
  Matched named;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == "{board}") {
      named.board = segs[i];
      named.names_board = true;
    } else if (want[i] == "{period}") {
      named.period = segs[i];
    } else if (want[i] == "{cohort}") {
      named.cohort = segs[i];
    } else if (want[i] == "{member}") {
      named.member = segs[i];
      named.names_member = true;
    } else if (want[i] != segs[i]) {
      const auto decoded = percent_decode(std::string(segs[i]));
      if (!decoded || *decoded != want[i]) return false;
    }
  }
  m.board = named.board;
  m.period = named.period;
  m.member = named.member;
  m.cohort = named.cohort;
  m.names_board = named.names_board;
  m.names_member = named.names_member;
  return true;
}

// As the Allow header names it (`get`: both).
const char* allowed(Method m) {
  switch (m) {
    case Method::get:
      return "GET, HEAD";
    case Method::post:
      return "POST";
    case Method::put:
      return "PUT";
    case Method::del:
      return "DELETE";
  }
  return "";
}

bool takes(const RouteEntry& r, std::string_view method) {
  const std::string_view allow = allowed(r.method);  // "GET, HEAD": either
  return r.method == Method::get ? method == allow.substr(0, 3) || method == allow.substr(5)
                                 : method == allow;
}

}  // namespace

Matched match_route(std::string_view method, std::string_view path) {
  Matched m;
  const auto segs = split(path, '/');  // "", "v1", "boards", ...
  if (segs.size() < 3 || !segs[0].empty() || segs[1] != "v1") return m;
  const std::vector<std::string_view> rest(segs.begin() + 2, segs.end());
  const char* pattern = nullptr;  // the first pattern that fits: the path's routes
  std::optional<Access> shared;   // the access every route of the path has, if one
  bool same = true;
  for (const RouteEntry& r : kRoutes) {
    if (pattern != nullptr ? std::string_view(pattern) != r.path : !fits(r.path, rest, m)) continue;
    pattern = r.path;
    m.allow += (m.allow.empty() ? "" : ", ") + std::string(allowed(r.method));
    same = same && (!shared || *shared == r.access);
    shared = r.access;
    if (m.route == nullptr && takes(r, method)) m.route = &r;
  }
  m.access = m.route != nullptr ? m.route->access : shared && same ? *shared : Access::read;
  return m;
}

HttpError method_not_allowed(std::string_view method, const std::string& allow) {
  return {405,
          "method " + quoted(std::string(method)) + " is not allowed here (" + allow + ")",
          {{"Allow", allow}}};
}

Lane lane_of(std::string_view method, std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  const Matched m = match_route(method, path);
  if (m.route == nullptr) return Lane::redis;  // a 404 or a 405: answered at once
  if (m.route->lane == Lane::postgres) return Lane::postgres;
  const std::string_view query = target.substr(path.size());
  for (const std::string_view p : split(query.empty() ? query : query.substr(1), '&')) {
    try {  // names as the routes read them: percent-decoded
      const std::string name = decode(p.substr(0, p.find('=')), true, "a parameter's name");
      if (name == "period_id" || name == "cursor" || name == "ids") return Lane::postgres;
    } catch (const HttpError&) {
      // answered 400 by the route, wherever it runs
    }
  }
  return Lane::redis;
}

}  // namespace bk::api
