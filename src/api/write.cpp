// The score write (api/write.h).
#include "api/write.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cstdint>

#include <optional>
#include <vector>

#include "api/request_parts.h"
#include "core/json.h"
#include "core/redact.h"
#include "core/time.h"

namespace bk::api {
namespace {

using json = nlohmann::json;

constexpr std::string_view kShape =
    R"(the body must be {"value": N, "at"?: RFC 3339 or epoch ms, "id"?: "...", "name"?: "...", "metadata"?: {...}})";

// How deep arrays and objects nest in `body` (strings skipped), counted before any parser
// recurses into it.
int nesting(std::string_view body) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// A whole number that fits in 64 signed bits (nlohmann keeps 2^63 .. 2^64-1 unsigned).
bool whole(const json& v) {
  return v.is_number_integer() && (!v.is_number_unsigned() ||
                                   v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX));
}

std::optional<Instant> time_of(const json& at) {
  if (at.is_string()) {
    const auto t = parse_rfc3339(at.get<std::string>());
    if (!t) bad("at must be an RFC 3339 time (2026-11-28T12:00:00Z) or epoch milliseconds");
    return t;
  }
  if (at.is_number_integer() && whole(at)) return from_epoch_ms(at.get<std::int64_t>());
  bad("at must be an RFC 3339 time (a string) or epoch milliseconds (a whole number)");
}

// The event the body describes.
service::Update update_of(const std::string& body, const std::string& board,
                          const std::string& member) {
  if (body.size() > kMaxWriteBody) {
    throw HttpError{413, "the body is larger than " + std::to_string(kMaxWriteBody) + " bytes"};
  }
  if (nesting(body) > kMaxWriteNesting) {
    bad("the body nests arrays and objects more than " + std::to_string(kMaxWriteNesting) +
        " deep");
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) bad("the body is not valid JSON (UTF-8): " + std::string(kShape));
  if (!doc.is_object()) bad(std::string(kShape));
  service::Update u{board, member, 0, std::nullopt, ""};
  bool has_value = false;
  for (const auto& [key, v] : doc.items()) {
    if (key == "value") {
      if (!whole(v)) bad("value must be a whole number within ±2^53");
      u.value = v.get<std::int64_t>();
      has_value = true;
    } else if (key == "at") {
      u.at = time_of(v);
    } else if (key == "id" || key == "name") {
      if (!v.is_string()) bad(key + " must be a string");
      if (key == "id") {
        u.event_id = v.get<std::string>();
        if (u.event_id.empty()) bad("id is empty: leave it out, or give the event's id");
      } else {
        u.name = v.get<std::string>();
      }
    } else if (key == "metadata") {
      if (!v.is_object()) bad("metadata must be a JSON object");
      u.meta = v.dump();
    } else {
      bad("unknown field " + json_string(key) + " (known: value, at, id, name, metadata)");
    }
  }
  if (!has_value) bad("value is missing: " + std::string(kShape));
  return u;
}

const char* outcome_label(service::UpdateStatus status) {
  switch (status) {
    case service::UpdateStatus::applied:
      return "applied";
    case service::UpdateStatus::duplicate:
      return "duplicate";
    case service::UpdateStatus::refused:
      return "refused";
    case service::UpdateStatus::failed:
      return "failed";
    case service::UpdateStatus::unavailable:
    case service::UpdateStatus::waiting:
      break;
  }
  return "unavailable";
}

}  // namespace

int refusal_status(service::Refusal refusal) {
  using R = service::Refusal;
  switch (refusal) {
    case R::unknown_board:
      return 404;
    case R::banned:
      return 403;
    case R::closed:
    case R::expired:
    case R::no_period:
      return 409;
    case R::cold_tier:
      return 503;
    case R::invalid_board:
    case R::invalid_member:
    case R::invalid_event_id:
      return 400;
    case R::none:
    case R::invalid_value:
    case R::too_early:
    case R::out_of_range:
    case R::invalid_profile:
    case R::invalid_time:
      return 422;
  }
  return 422;
}

std::string written_json(const std::string& board, const std::string& member,
                         const service::Written& w) {
  const bool applied = w.result.status == service::UpdateStatus::applied;
  std::string list = "[";
  for (const service::PeriodStanding& p : w.periods) {
    JsonLine line;
    line.str("period", p.period).str("period_id", p.period_id);
    line.raw("points", p.after ? std::to_string(p.after->points) : "null");
    line.raw("rank", p.after ? std::to_string(p.after->rank) : "null");
    if (applied && p.before) line.num("previous_rank", p.before->rank);
    if (applied && p.best) {
      line.flag("improved", p.after && (!p.before || p.before->points != p.after->points));
    }
    list += (list.size() > 1 ? "," : "") + line.done();
  }
  JsonLine out;
  out.str("board", board).str("member", member).flag("applied", applied);
  if (!applied) out.flag("duplicate", true);
  return out.raw("periods", list + "]").done();
}

std::string write_score(const Request& request, const std::string& board, const std::string& member,
                        service::Leaderboards& boards, Response& answer) {
  const service::Written w = boards.write(update_of(request.body, board, member));
  const service::UpdateResult& r = w.result;
  answer.outcome = outcome_label(r.status);
  if (r.status == service::UpdateStatus::refused) {
    answer.reason = service::refusal_label(r.refusal);
    throw HttpError{
        refusal_status(r.refusal),
        std::string("refused (") + service::refusal_label(r.refusal) + "): " + r.reason};
  }
  if (r.status == service::UpdateStatus::failed) {
    spdlog::error("serve: a write to {} failed: {}", board, redact(r.reason));
    throw HttpError{500,
                    "the board's keys refuse updates (logged); the points may have been applied: "
                    "send it again with an id"};
  }
  if (r.status != service::UpdateStatus::applied && r.status != service::UpdateStatus::duplicate) {
    throw HttpError{503, "not applied, try again: " + r.reason, {{"Retry-After", "1"}}};
  }
  return written_json(board, member, w);
}

}  // namespace bk::api
