// Routing, parameters and JSON of the read API. Every failure becomes a JSON error with the
// status the contract names; nothing a client sends can crash the server.
#include "api/api.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "api/admin.h"
#include "api/cursor.h"
#include "api/ids_body.h"
#include "api/request_parts.h"
#include "api/split.h"
#include "api/write.h"
#include "core/json.h"
#include "core/percent.h"
#include "core/redact.h"
#include "core/validate.h"

namespace bk::api {
namespace {

// A standing; "tier" (a name or null) only on a board with tiers (`tiered`).
std::string record(const service::Standing& s, bool tiered) {
  JsonLine line;
  line.num("rank", s.rank).str("member", s.member).num("points", s.points);
  line.time("achieved_at", s.achieved_at);
  if (tiered) line.raw("tier", s.tier ? json_string(*s.tier) : "null");
  return line.profile(s.name, s.metadata, s.unavailable).done();
}

std::string records(const std::vector<service::Standing>& rows, bool tiered) {
  std::string out = "[";
  for (const auto& r : rows) {
    if (out.size() > 1) out += ',';
    out += record(r, tiered);
  }
  return out + "]";
}

const char* state_name(service::PeriodState state) {
  switch (state) {
    case service::PeriodState::open:
      return "open";
    case service::PeriodState::closed:
      return "closed";
    case service::PeriodState::archived:
      break;
  }
  return "archived";
}

bool tiered(const service::PeriodView& view) {
  return !view.ref.config->tiers.empty();
}

JsonLine period_fields(const service::PeriodView& view) {
  const service::PeriodRef& ref = view.ref;
  return std::move(JsonLine()
                       .str("board", ref.board)
                       .str("period", ref.spec->name)
                       .str("period_id", ref.period.id)
                       .time("period_start", ref.period.start)
                       .time("period_end", ref.period.end)
                       .str("state", state_name(view.state)));
}

// The ids of a members request: `ids=a,b,c` (each percent-encoded; a comma inside an id is
// %2C) or a POST body {"ids": [...]}. Duplicates are read once.
std::vector<std::string> ids_of(const Request& request,
                                const std::map<std::string, std::string_view>& params) {
  std::vector<std::string> ids;
  if (request.method == "POST") {
    if (params.count("ids") != 0) bad("give the ids in the body or in the query, not both");
    IdsBody body = ids_from_body(request.body, static_cast<std::size_t>(kMaxIds));
    if (body.problem) bad(*body.problem);
    ids = std::move(body.ids);
  } else {
    const auto it = params.find("ids");
    if (it == params.end() || it->second.empty()) bad("ids is missing: ?ids=a,b,c");
    const auto parts = split(it->second, ',');
    if (static_cast<std::int64_t>(parts.size()) > kMaxIds) {
      bad("at most " + std::to_string(kMaxIds) + " ids a request, not " +
          std::to_string(parts.size()));
    }
    for (const std::string_view part : parts) ids.push_back(member_of(part, true));
  }
  if (ids.empty()) bad("ids is empty");
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (auto& id : ids) {
    if (seen.insert(id).second) unique.push_back(std::move(id));
  }
  return unique;
}

// A 401 that says how to authenticate (RFC 6750): with error="invalid_token" when a bearer
// token was given and is not one of ours.
HttpError unauthorized(bool wrong_token) {
  return {401,
          "a bearer token is needed: Authorization: Bearer <token>",
          {{"WWW-Authenticate", wrong_token ? R"(Bearer error="invalid_token")" : "Bearer"}}};
}

// The path of a target, without its query (which may hold a cursor or ids): for the log.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

class Route {
 public:
  Route(const Request& request, service::Leaderboards& boards, const CursorKey& cursor_key)
      : request_(request), boards_(boards), reads_(boards.reads()), cursor_key_(cursor_key) {}

  Response run() {
    const std::string_view target(request_.target);
    const std::size_t q = target.find('?');
    const std::string_view path = target.substr(0, q);
    query_ = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
    const Matched m = match_route(request_.method, path);
    if (m.allow.empty()) throw HttpError{404, "no such route: " + quoted(path)};
    if (m.names_board) {
      board_ = decode(m.board, false, "the board name");
      if (auto problem = board_name_problem(board_)) bad(*problem + ": " + json_string(board_));
      // Said here: the service's message names the config file.
      if (boards_.config().board_for(board_) == nullptr) {
        throw HttpError{404, "no board entry matches board " + quoted(board_)};
      }
    }
    if (m.route == nullptr) throw method_not_allowed(request_.method, m.allow);
    response_.route = m.route->name;
    return done(answer(m));
  }

  Response response_;
  // The write token of the request (with its snapshot), for a batch's boards.
  std::shared_ptr<const TokenSnapshot> tokens_;
  const WriteToken* writer_ = nullptr;
  PayFor pay_;  // a batch's cost in rate limits

 private:
  const Request& request_;
  service::Leaderboards& boards_;
  service::Reads& reads_;
  const CursorKey& cursor_key_;
  std::string_view query_;
  std::string board_;

  MayWrite may_write() const {
    return [writer = writer_](const std::string& board) -> std::optional<HttpError> {
      if (writer == nullptr) return HttpError{403, "a batch needs a write token"};
      return refuse_board(*writer, board);
    };
  }

  std::string answer(const Matched& m) {
    const std::string period = m.period.empty() ? "" : decode(m.period, false, "the period");
    const std::string member = m.names_member ? member_of(m.member, false) : "";
    switch (m.route->id) {
      case RouteId::boards:
        return boards();
      case RouteId::periods:
        return periods();
      case RouteId::bans:
        parameters(query_, {});
        return list_bans(board_, boards_);
      case RouteId::ban:
        parameters(query_, {});
        return ban_member(request_, board_, member, boards_);
      case RouteId::unban:
        parameters(query_, {});
        return unban_member(request_, board_, member, boards_);
      case RouteId::score:
        parameters(query_, {});
        return write_score(request_, board_, member, boards_, response_);
      case RouteId::events:
        return write_events(request_, boards_, may_write(), pay_, response_);
      case RouteId::top:
        return top(period);
      case RouteId::history:
        return history(period);
      case RouteId::members:
      case RouteId::members_post:
        return members(period);
      case RouteId::member:
        return this->member(period, member);
      case RouteId::remove:
        return remove_member(query_, board_, period, member, boards_);
      case RouteId::around:
        return around(period, member);
      case RouteId::cohort:
        return cohort(period, member, true);
      case RouteId::cohort_top:
        return cohort(period, decode(m.cohort, false, "the cohort id"), false);
    }
    throw HttpError{404, "no such route"};
  }
  Response done(std::string body) {
    response_.body = std::move(body);
    return response_;
  }

  // The boards the config names and Redis holds, by name; the cursor is the last board listed
  // (base64url): the next page lists the boards after it.
  std::string boards() {
    const auto params = parameters(query_, {"limit", "cursor"});
    const std::int64_t limit = number(params, "limit", 100, 1, kMaxLimit);
    const service::BoardsPage page = reads_.boards(name_cursor(params, "a boards page"), limit);
    std::string list = "[";
    for (const service::BoardListing& b : page.boards) {
      if (list.size() > 1) list += ',';
      std::string periods = "[";
      if (b.entry != nullptr) {
        for (const PeriodSpec& p : b.entry->periods) {
          periods += (periods.size() > 1 ? "," : "") + json_string(p.name);
        }
      }
      list += JsonLine()
                  .str("board", b.board)
                  .flag("configured", b.entry != nullptr)
                  .raw("entry", b.entry != nullptr ? json_string(b.entry->pattern) : "null")
                  .raw("periods", periods + "]")
                  .flag("in_redis", b.in_redis)
                  .done();
    }
    return JsonLine()
        .raw("boards", list + "]")
        .raw("next_cursor", page.next ? json_string(base64url(*page.next)) : std::string("null"))
        .done();
  }

  // A cursor that names where a page of names (boards, period ids) ended: base64url of the
  // last name listed. Nothing is signed: a made-up one only starts the listing elsewhere.
  static std::optional<std::string> name_cursor(
      const std::map<std::string, std::string_view>& params, const char* handed_out_by) {
    const auto it = params.find("cursor");
    if (it == params.end()) return std::nullopt;
    std::optional<std::string> name = unbase64url(decode(it->second, true, "cursor"));
    if (!name || name->empty())
      bad(std::string("cursor is not one that ") + handed_out_by + " handed out");
    return name;
  }

  std::string periods() {
    parameters(query_, {});
    const auto rows = reads_.periods(board_);
    const BoardConfig& c = service::board_entry(boards_.config(), board_);
    std::string list = "[";
    for (const auto& r : rows) {
      if (list.size() > 1) list += ',';
      const bool has = !r.current.id.empty();
      const auto at = [&](Instant t) { return has ? std::optional<Instant>(t) : std::nullopt; };
      JsonLine p;
      p.str("period", r.period);
      if (has) {
        p.str("period_id", r.current.id);
      } else {
        p.raw("period_id", "null");
      }
      list += p.time("period_start", at(r.current.start))
                  .time("period_end", at(r.current.end))
                  .time("next_reset", at(r.current.end))
                  .num("members", r.current_members)
                  .num("hot_members", r.hot_members)
                  .num("cold_members", r.cold_members)
                  .done();
    }
    return JsonLine()
        .str("board", board_)
        .str("timezone", c.timezone)
        .raw("periods", list + "]")
        .done();
  }

  std::string top(const std::string& period) {
    const auto params = parameters(query_, {"period_id", "limit", "cursor"});
    const service::PeriodView view = reads_.locate(board_, period, period_id(params));
    const std::int64_t limit =
        number(params, "limit", std::min(view.ref.config->display, kMaxLimit), 1, kMaxLimit);
    std::optional<service::PageMark> after;
    if (const auto it = params.find("cursor"); it != params.end()) {
      DecodedCursor cursor =
          decode_cursor(view.ref, decode(it->second, true, "cursor"), cursor_key_.get());
      if (!cursor.mark) bad(cursor.problem);
      after = std::move(cursor.mark);
    }
    const service::Page page = reads_.top(view, after, limit);
    const std::string next =
        page.next ? json_string(encode_cursor(view.ref, *page.next, cursor_key_.get()))
                  : std::string("null");
    return period_fields(view)
        .raw("total", page.total ? std::to_string(*page.total) : "null")
        .raw("records", records(page.rows, tiered(view)))
        .raw("next_cursor", next)
        .done();
  }

  // The archived periods of the board and period, newest first; the cursor is the last
  // period id listed (base64url): the next page lists the periods before it.
  std::string history(const std::string& period) {
    const auto params = parameters(query_, {"limit", "cursor"});
    const std::int64_t limit = number(params, "limit", 20, 1, kMaxLimit);
    const service::ArchivedPage page =
        reads_.archived(board_, period, name_cursor(params, "a history page"), limit);
    std::string list = "[";
    for (const auto& p : page.periods) {
      if (list.size() > 1) list += ',';
      list += JsonLine()
                  .str("period_id", p.period_id)
                  .time("period_start", p.start)
                  .time("period_end", p.end)
                  .num("members", p.members)
                  .time("archived_at", p.archived_at)
                  .raw("tiers", p.tiers.value_or("null"))
                  .done();
    }
    return JsonLine()
        .str("board", board_)
        .str("period", period)
        .raw("periods", list + "]")
        .raw("next_cursor", page.next ? json_string(base64url(*page.next)) : std::string("null"))
        .done();
  }

  std::string member(const std::string& period, const std::string& member) {
    const auto params = parameters(query_, {"period_id"});
    const service::PeriodView view = reads_.locate(board_, period, period_id(params));
    if (view.ref.config->league) return cohort_record(view, member);
    const auto found = reads_.member(view, member);
    if (!found) {
      throw HttpError{404, "member " + json_string(member) + " is not on " + board_ + " " + period +
                               " " + view.ref.period.id};
    }
    return record(*found, tiered(view));
  }

  std::string members(const std::string& period) {
    const auto params = parameters(query_, {"period_id", "ids"});
    const std::vector<std::string> ids = ids_of(request_, params);
    const service::PeriodView view = reads_.locate(board_, period, period_id(params));
    const auto found = reads_.members(view, ids);
    std::set<std::string> on_board;
    for (const auto& s : found) on_board.insert(s.member);
    std::string missing = "[";
    for (const std::string& id : ids) {
      if (on_board.count(id) != 0) continue;
      if (missing.size() > 1) missing += ',';
      missing += json_string(id);
    }
    return JsonLine()
        .raw("records", records(found, tiered(view)))
        .raw("not_found", missing + "]")
        .done();
  }

  // A member on a league board: its rank in its cohort, the cohort and its zone.
  std::string cohort_record(const service::PeriodView& view, const std::string& member) {
    const service::Cohort c = reads_.cohort_of(view, member);
    for (const service::CohortRow& r : c.rows) {
      if (r.member != member) continue;
      return JsonLine()
          .num("rank", r.rank)
          .str("member", r.member)
          .num("points", r.points)
          .time("achieved_at", r.achieved_at)
          .str("division", c.division)
          .str("cohort", c.cohort)
          .str("zone", zone_name(r.zone))
          .done();
    }
    throw HttpError{404,
                    "member " + json_string(member) + " is not ranked in its cohort " + c.cohort};
  }

  // A league board's cohort (service/cohorts.h): the member's (`by_member`) or by its id.
  std::string cohort(const std::string& period, const std::string& key, bool by_member) {
    const auto params = parameters(query_, {"period_id"});
    const service::PeriodView view = reads_.locate(board_, period, period_id(params));
    const service::Cohort c = by_member ? reads_.cohort_of(view, key) : reads_.cohort(view, key);
    std::string rows = "[";
    std::string self = "null";
    for (const service::CohortRow& r : c.rows) {
      JsonLine row;
      row.num("rank", r.rank).str("member", r.member).num("points", r.points);
      if (view.ref.config->tie != TieBreak::none && !c.archived)
        row.time("achieved_at", r.achieved_at);
      std::string json = row.str("zone", zone_name(r.zone)).done();
      if (by_member && r.member == key) self = json;
      rows += (rows.size() > 1 ? "," : "") + json;
    }
    return period_fields(view)
        .str("division", c.division)
        .str("cohort", c.cohort)
        .raw("member", self)
        .raw("records", rows + "]")
        .done();
  }

  std::string around(const std::string& period, const std::string& member) {
    const auto params = parameters(query_, {"period_id", "k"});
    const std::int64_t k = number(params, "k", 5, 0, kMaxK);
    const service::PeriodView view = reads_.locate(board_, period, period_id(params));
    const auto rows = reads_.around(view, member, k);
    const auto self = std::find_if(rows.begin(), rows.end(),
                                   [&](const service::Standing& s) { return s.member == member; });
    if (self == rows.end()) {
      throw HttpError{404, "member " + json_string(member) + " is not on " + board_ + " " + period +
                               " " + view.ref.period.id};
    }
    return JsonLine()
        .raw("member", record(*self, tiered(view)))
        .raw("records", records(rows, tiered(view)))
        .done();
  }
};

}  // namespace

Api::Api(std::vector<std::string> tokens, std::function<std::string()> cursor_key,
         std::vector<std::string> admin_tokens, std::vector<WriteToken> write_tokens)
    : Api(std::move(cursor_key),
          std::make_shared<const TokenStore>(
              Tokens{std::move(tokens), std::move(admin_tokens), std::move(write_tokens)})) {}

Api::Api(std::function<std::string()> cursor_key, std::shared_ptr<const TokenStore> tokens,
         std::shared_ptr<RateLimits> limits)
    : tokens_(std::move(tokens)),
      limits_(std::move(limits)),
      cursor_key_(std::make_unique<CursorKey>(std::move(cursor_key))) {}

namespace {

Response refused(const HttpError& e) {
  return Response{e.status, error_body(e.message), "other", e.headers, true};
}

}  // namespace

std::optional<Response> Api::refuse_access(const Matched& m, const std::string& authorization,
                                           const TokenSnapshot& tokens, Caller& who) const {
  const Tokens& t = tokens.tokens();
  const std::optional<std::string_view> given = bearer_token(authorization);
  who = given ? tokens.identify(*given) : Caller{};
  const bool admin = m.access == Access::admin;
  if (admin && t.admin.empty()) {
    return refused({403,
                    "the admin routes are closed: serve has no admin token "
                    "(BOARDKEEPER_SERVE_ADMIN_TOKENS, serve.admin_tokens_file)"});
  }
  if (m.access == Access::write && t.write.empty()) {
    return refused({404,
                    "writes are off: serve has no write token (BOARDKEEPER_SERVE_WRITE_TOKENS, "
                    "serve.write_tokens_file)"});
  }
  if (m.access == Access::read && t.read.empty()) return std::nullopt;
  if (!given) return refused(unauthorized(false));
  if (m.access == Access::write) return refuse_write(m, who);
  switch (who.kind) {
    case TokenKind::admin:
      return std::nullopt;  // an admin token may read too
    case TokenKind::read:
      if (!admin) return std::nullopt;
      return refused({403, "this token may read but not moderate: use an admin token"});
    case TokenKind::write:
      return refused({403, "this token may write scores but not read or moderate"});
    case TokenKind::none:
      break;
  }
  return refused(unauthorized(true));
}

std::optional<Response> Api::refuse_write(const Matched& m, const Caller& who) const {
  if (who.kind != TokenKind::write) {
    if (who.kind != TokenKind::none) {
      return refused({403, "this token may not write scores: use a write token"});
    }
    return refused(unauthorized(true));
  }
  if (!m.names_board) return std::nullopt;  // a batch: each event's board, once read
  const auto board = percent_decode(std::string(m.board));
  if (!board) return std::nullopt;  // the route answers 400
  if (auto refusal = refuse_board(*who.write, *board)) return refused(*refusal);
  return std::nullopt;
}

bool Api::authorized(const std::string& authorization) const {
  const auto tokens = tokens_->current();
  Caller who;
  return !refuse_access(Matched{}, authorization, *tokens, who);
}

Response Api::unavailable(const Error& e, std::string route) {
  const char* server = e.backend() == Backend::redis      ? "Redis"
                       : e.backend() == Backend::postgres ? "PostgreSQL"
                                                          : "a server this read needs";
  const std::string what = std::string(server) + (e.hung() ? " did not answer in time (it may be "
                                                             "hung); the read was abandoned"
                                                           : " is unreachable");
  Response r{503, error_body(what), std::move(route), {{"Retry-After", e.hung() ? "5" : "1"}}};
  if (e.hung()) r.hung = e.backend();
  return r;
}

std::optional<Response> Api::refuse_before_body(const Request& head) const {
  const std::string_view path = path_of(head.target);
  if (path.rfind("/v1/", 0) != 0) return std::nullopt;  // answered (404) without a body
  const Matched m = match_route(head.method, path);
  const auto tokens = tokens_->current();
  Caller who;
  if (auto refusal = refuse_access(m, head.authorization, *tokens, who)) return refusal;
  if (m.route != nullptr) return refuse_over_limit(m, who);
  if (m.allow.empty()) return std::nullopt;
  const HttpError e = method_not_allowed(head.method, m.allow);
  return Response{e.status, error_body(e.message), "other", e.headers, m.access == Access::admin};
}

std::optional<std::uint64_t> Api::token_share(const Request& head) const {
  const std::string_view path = path_of(head.target);
  if (path.rfind("/v1/", 0) != 0) return std::nullopt;
  const auto tokens = tokens_->current();
  if (match_route(head.method, path).access == Access::read && tokens->tokens().read.empty()) {
    return std::nullopt;  // needs no token: a made-up one must not buy a share of its own
  }
  const std::optional<std::string_view> given = bearer_token(head.authorization);
  const Caller who = given ? tokens->identify(*given) : Caller{};
  if (who.kind == TokenKind::none) return std::nullopt;
  return who.id;
}

bool Api::fetch_cursor_key() const {
  try {
    cursor_key_->get();
    return true;
  } catch (const Error& e) {
    spdlog::warn(
        "serve: the cursor key cannot be had yet ({}); pages that hand out a cursor "
        "answer 503 until it can",
        redact(e.what()));
    return false;
  }
}

Response Api::handle(const Request& request, service::Leaderboards& boards) const {
  std::optional<Verdict> limit;
  Response response = respond(request, boards, limit);
  if (limit) add_limit_headers(*limit, response.headers);
  return response;
}

Response Api::respond(const Request& request, service::Leaderboards& boards,
                      std::optional<Verdict>& limit) const {
  Route route(request, boards, *cursor_key_);
  try {
    if (request.target.rfind("/v1/", 0) == 0) {
      const Matched m = match_route(request.method, path_of(request.target));
      route.response_.admin = m.access != Access::read;  // never cached
      route.tokens_ = tokens_->current();
      Caller who;
      if (auto refusal = refuse_access(m, request.authorization, *route.tokens_, who)) {
        return *refusal;
      }
      route.writer_ = who.write;
      limit = look_limit(m, who);
      route.pay_ = [this, id = who.id, &limit](const std::vector<service::Update>& events) {
        pay_for_batch(id, events, limit);
      };
    }
    return route.run();
  } catch (const HttpError& e) {
    route.response_.status = e.status;
    route.response_.body = error_body(e.message);
    route.response_.headers = e.headers;
  } catch (const NotFoundError& e) {
    route.response_.status = 404;
    route.response_.body = error_body(e.what());
  } catch (const UsageError& e) {
    route.response_.status = 400;
    route.response_.body = error_body(e.what());
  } catch (const BusyError& e) {
    spdlog::warn("serve: {} {}: {}", escape_control(request.method, false),
                 escape_control(path_of(request.target), false), redact(e.what()));
    route.response_.status = 503;
    route.response_.body = error_body(e.what());
    route.response_.headers = {{"Retry-After", "5"}};
    route.response_.busy = true;
  } catch (const Error& e) {
    if (!e.transient()) throw;  // the server logs it and answers 500
    spdlog::warn("serve: {} {}: {}", escape_control(request.method, false),
                 escape_control(path_of(request.target), false), redact(e.what()));
    Response r = unavailable(e, route.response_.route.empty() ? "other" : route.response_.route);
    r.outcome = route.response_.outcome;
    r.reason = route.response_.reason;
    return r;
  }
  if (route.response_.route.empty()) route.response_.route = "other";
  return route.response_;
}

}  // namespace bk::api
