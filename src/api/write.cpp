// The score write (api/write.h).
#include "api/write.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdint>
#include <nlohmann/json.hpp>
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

// The event the body describes (its fields only: see keyed()).
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

// The first 16 bytes of the SHA-256 of `text`, in hex.
std::string digest(const std::string& text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(text.data(), text.size(), md, &n, EVP_sha256(), nullptr) != 1 || n < 16) {
    throw Error("write: OpenSSL's SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 16; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
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

void require_json(const Request& request) {
  std::string type = request.content_type.substr(0, request.content_type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (type != "application/json") {
    throw HttpError{415, request.content_type.empty()
                             ? "a write needs Content-Type: application/json"
                             : "a write's body must be Content-Type: application/json"};
  }
}

std::optional<std::string> idempotency_key(const std::string& header) {
  if (header.empty()) return std::nullopt;
  std::string key;
  const bool quoted = header.size() >= 2 && header.front() == '"' && header.back() == '"';
  for (std::size_t i = quoted ? 1 : 0; i < header.size() - (quoted ? 1 : 0); ++i) {
    char c = header[i];
    if (quoted && c == '\\' && i + 2 < header.size()) c = header[++i];
    if (c < 0x21 || c > 0x7e || (!quoted && c == '"')) {
      bad("Idempotency-Key must be a string of printable ASCII (\"...\", RFC 8941)");
    }
    key += c;
  }
  if (key.empty() || key.size() > kMaxIdempotencyKey) {
    bad("Idempotency-Key must hold 1 to " + std::to_string(kMaxIdempotencyKey) + " characters");
  }
  return key;
}

void keyed(service::Update& u, const std::optional<std::string>& key) {
  if (key && !u.event_id.empty() && *key != u.event_id) {
    bad("the Idempotency-Key header and the body's id differ: send one, or the same");
  }
  if (key) u.event_id = *key;
  if (u.event_id.empty()) return;
  json canonical = json::array({u.board, u.member, u.value});
  canonical.push_back(u.at ? json(to_epoch_ms(*u.at)) : json());
  canonical.push_back(u.name ? json(*u.name) : json());
  canonical.push_back(u.meta ? json::parse(*u.meta) : json());
  u.fingerprint = digest(canonical.dump());
}

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
    case R::key_reused:
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
  require_json(request);
  service::Update update = update_of(request.body, board, member);
  keyed(update, idempotency_key(request.idempotency_key));
  const service::Written w = boards.write(update);
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
