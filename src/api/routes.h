// Every route of the HTTP API, once (docs/http-api.md): its path, its method, who may use it
// and its lane. One table answers before the body is read (access, method: Api's
// refuse_before_body), which lane a request runs in (lane_of) and where it goes (Api's
// dispatch), so the three can never disagree.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "api/request_parts.h"

namespace bk::api {

enum class RouteId {
  boards,
  periods,
  bans,
  ban,
  unban,
  score,
  top,
  history,
  members,
  members_post,
  member,
  remove,
  around,
  events,
  cohort,      // a member's cohort on a league board
  cohort_top,  // a cohort by its id
};

// A route's method; `get` takes HEAD too.
enum class Method { get, post, put, del };

// Who may use a route: a read token (or anyone when serve has none), a write token (whose
// scope covers the board), an admin token.
enum class Access { read, write, admin };

// serve's worker lanes (http/server.h, Options::lane): a read that Redis alone answers as a
// rule (the first page of a period, a member and its neighbours) never waits for a worker
// held by one that needs PostgreSQL as a rule (see lane_of).
enum class Lane : std::size_t { redis = 0, postgres = 1 };

struct RouteEntry {
  RouteId id;
  const char* name;  // for metrics: "top", "member", "ban"...
  Method method;
  // The segments after /v1/: a literal ("boards"), or {board} / {period} / {member} / {cohort}.
  const char* path;
  Access access;
  Lane lane;  // as a rule; lane_of moves a request to PostgreSQL's by its parameters
};

// A /v1 path (still percent-encoded, no query) as the table knows it.
struct Matched {
  const RouteEntry* route = nullptr;  // the route of this method and path; null: none
  // The methods the routes of this path take ("GET, HEAD, DELETE": a 405's Allow); empty
  // when no route has this path (a 404).
  std::string allow;
  // The route's; without one, the access every route of the path has (a 405 of a write or
  // admin path is told only to its kind of token), read when they differ.
  Access access = Access::read;
  // The raw segments the pattern named, still encoded: views into the path given.
  std::string_view board;
  std::string_view period;
  std::string_view member;
  std::string_view cohort;
  bool names_board = false;   // the pattern has {board} (an empty segment is still one)
  bool names_member = false;  // the pattern has {member} (likewise)
};
Matched match_route(std::string_view method, std::string_view path);

// The 405 of `method` where only `allow` is taken, with its Allow header.
HttpError method_not_allowed(std::string_view method, const std::string& allow);

// The lane of a request, decided from its target alone, before any backend is asked: its
// route's, or PostgreSQL's for a past period (period_id), a cursor's later pages and many ids
// at once (ids). A read in the Redis lane that meets a spilled member still asks PostgreSQL,
// under its deadline.
Lane lane_of(std::string_view method, std::string_view target);

}  // namespace bk::api
