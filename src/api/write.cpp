// The score write (api/write.h).
#include "api/write.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "api/request_parts.h"
#include "core/json.h"
#include "core/redact.h"
#include "core/time.h"
#include "core/validate.h"

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

// A number written -0: nlohmann reads it as a signed 0 (0 itself, like every number without a
// sign, is read unsigned). Readers disagree on what -0 is (JavaScript's is a float), so it is
// refused, not taken for 0.
bool minus_zero(const json& v) {
  return v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() == 0;
}

// A whole number that fits in 64 signed bits (nlohmann keeps 2^63 .. 2^64-1 unsigned), not -0.
bool whole(const json& v) {
  return v.is_number_integer() && !minus_zero(v) &&
         (!v.is_number_unsigned() ||
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

// The body as a JSON object: at most `max` bytes (else 413), nested at most kMaxWriteNesting
// deep, valid JSON, an object (else 400 with `shape`).
json body_of(const std::string& body, std::size_t max, std::string_view shape) {
  if (body.size() > max) {
    throw HttpError{413, "the body is larger than " + std::to_string(max) + " bytes"};
  }
  if (nesting(body) > kMaxWriteNesting) {
    bad("the body nests arrays and objects more than " + std::to_string(kMaxWriteNesting) +
        " deep");
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) bad("the body is not valid JSON (UTF-8): " + std::string(shape));
  if (!doc.is_object()) bad(std::string(shape));
  return doc;
}

// The event an object describes (its fields only: see keyed()). `named`: the object names
// its board and member too (a batch's event; they are read by the caller).
service::Update event_of(const json& doc, const std::string& board, const std::string& member,
                         bool named = false) {
  service::Update u{board, member, 0, std::nullopt, ""};
  bool has_value = false;
  for (const auto& [key, v] : doc.items()) {
    if (named && (key == "board" || key == "member")) continue;
    if (key == "value") {
      if (minus_zero(v)) bad("value is -0: send 0");
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
        // The update path's own rule (add and ingest ask it too), said here as a 400 naming
        // the field, before any key is claimed.
        if (auto problem = event_id_problem(u.event_id)) bad("id is refused: " + *problem);
      } else {
        u.name = v.get<std::string>();
      }
    } else if (key == "metadata") {
      if (!v.is_object()) bad("metadata must be a JSON object");
      u.meta = v.dump();
    } else {
      bad("unknown field " + json_string(key) + " (known: " + (named ? "board, member, " : "") +
          "value, at, id, name, metadata)");
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

std::optional<HttpError> refuse_board(const WriteToken& token, const std::string& board) {
  if (token.boards.empty()) return std::nullopt;
  for (const std::string& glob : token.boards) {
    if (board_matches(glob, board)) return std::nullopt;
  }
  return HttpError{403, "this write token may not write board " + bk::quoted(board)};
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

namespace {

// A period's standing after a write: points, rank (null when it could not be read) and, on a
// board with tiers, the tier.
void standing_after(JsonLine& line, const service::PeriodStanding& p) {
  line.raw("points", p.after ? std::to_string(p.after->points) : "null");
  line.raw("rank", p.after ? std::to_string(p.after->rank) : "null");
  if (p.tiered) line.raw("tier", p.after && p.after->tier ? json_string(*p.after->tier) : "null");
}

}  // namespace

std::string written_json(const std::string& board, const std::string& member,
                         const service::Written& w) {
  const bool applied = w.result.status == service::UpdateStatus::applied;
  std::string list = "[";
  for (const service::PeriodStanding& p : w.periods) {
    JsonLine line;
    line.str("period", p.period).str("period_id", p.period_id);
    standing_after(line, p);
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
  service::Update update = event_of(body_of(request.body, kMaxWriteBody, kShape), board, member);
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

namespace {

constexpr std::string_view kBatchShape =
    R"(the body must be {"events": [{"board": "...", "member": "...", "value": N, ...}, ...]})";

// The batch's events, in order: each names its board and member as strings, each board one
// `may_write` allows (else its HttpError, naming the event). An event that is not the
// documented object is a 400 naming its index; nothing is applied then. (Whether a board or
// member name is valid is the update path's to say: a refusal in that event's result.)
std::vector<service::Update> events_of(const Request& request, const MayWrite& may_write,
                                       const std::optional<std::string>& key) {
  const json doc = body_of(request.body, kMaxBatchBody, kBatchShape);
  const auto events = doc.find("events");
  if (doc.size() != 1 || events == doc.end() || !events->is_array()) bad(std::string(kBatchShape));
  if (events->empty() || events->size() > kMaxBatchEvents) {
    bad("a batch holds 1 to " + std::to_string(kMaxBatchEvents) + " events, not " +
        std::to_string(events->size()));
  }
  std::vector<service::Update> out;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const std::string where = "events[" + std::to_string(i) + "]: ";
    try {
      const json& e = (*events)[i];
      if (!e.is_object()) bad("not an object");
      const auto board = e.find("board"), member = e.find("member");
      if (board == e.end() || !board->is_string()) bad("board is missing or not a string");
      if (member == e.end() || !member->is_string()) bad("member is missing or not a string");
      if (auto refused = may_write(board->get<std::string>())) throw std::move(*refused);
      service::Update u = event_of(e, board->get<std::string>(), member->get<std::string>(), true);
      // The header's key names the batch: an event without its own id is keyed by its place.
      keyed(u, key && u.event_id.empty() ? std::optional(*key + ":" + std::to_string(i))
                                         : std::nullopt);
      out.push_back(std::move(u));
    } catch (HttpError& e) {
      e.message = where + e.message;
      throw;
    }
  }
  return out;
}

// The fingerprint of a keyed batch: its events' ids and fingerprints, in order.
std::string batch_fingerprint(const std::vector<service::Update>& events) {
  json all = json::array();
  for (const service::Update& u : events) all.push_back({u.event_id, u.fingerprint});
  return digest(all.dump());
}

std::vector<std::string> boards_of(const std::vector<service::Update>& events) {
  std::vector<std::string> out;
  for (const service::Update& u : events) out.push_back(u.board);
  return out;
}

// One event's entry of the batch's answer.
std::string result_json(const service::Update& u, const service::Written& w, bool standings) {
  using S = service::UpdateStatus;
  const service::UpdateResult& r = w.result;
  JsonLine line;
  line.str("board", u.board).str("member", u.member).flag("applied", r.status == S::applied);
  if (r.status == S::duplicate) line.flag("duplicate", true);
  if (r.status != S::applied && r.status != S::duplicate) {
    const bool refused = r.status == S::refused;
    line.num("status", refused ? refusal_status(r.refusal) : r.status == S::failed ? 500 : 503);
    line.str("reason", refused ? service::refusal_label(r.refusal) : outcome_label(r.status));
    // Said here, as the single write's 404 says it: the service's reason names the config
    // file, which is no client's business.
    line.str("error", refused && r.refusal == service::Refusal::unknown_board
                          ? "no board entry matches board " + bk::quoted(u.board)
                          : r.reason);
    return line.done();
  }
  std::string list = "[";
  if (standings) {
    for (const service::PeriodStanding& p : w.periods) {
      JsonLine period;
      period.str("period", p.period).str("period_id", p.period_id);
      standing_after(period, p);
      list += (list.size() > 1 ? "," : "") + period.done();
    }
  } else {
    for (const service::PeriodPoints& p : r.points) {
      list += (list.size() > 1 ? "," : "") + JsonLine()
                                                 .str("period", p.period)
                                                 .str("period_id", p.period_id)
                                                 .num("points", p.points)
                                                 .done();
    }
  }
  return line.raw("periods", list + "]").done();
}

}  // namespace

std::string write_events(const Request& request, service::Leaderboards& boards,
                         const MayWrite& may_write, const PayFor& pay, Response& answer) {
  require_json(request);
  const std::string_view target = request.target;
  const std::size_t q = target.find('?');
  const auto params =
      parameters(q == std::string_view::npos ? "" : target.substr(q + 1), {"standings"});
  bool standings = false;
  if (const auto it = params.find("standings"); it != params.end()) {
    if (it->second != "true" && it->second != "false") bad("standings must be true or false");
    standings = it->second == "true";
  }
  const std::optional<std::string> key = idempotency_key(request.idempotency_key);
  const std::vector<service::Update> events = events_of(request, may_write, key);
  if (pay) pay(events);
  if (key && !boards.claim_batch(*key, batch_fingerprint(events), boards_of(events))) {
    answer.outcome = "refused";
    answer.reason = service::refusal_label(service::Refusal::key_reused);
    throw HttpError{422,
                    "refused (key_reused): the Idempotency-Key was sent with another batch "
                    "within the board's dedupe_window; a new batch needs a new key"};
  }
  const std::vector<service::Written> written = boards.write_batch(events, standings);
  std::string list = "[";
  std::map<std::string, std::int64_t> counts;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const service::UpdateResult& r = written[i].result;
    list += (i > 0 ? "," : "") + result_json(events[i], written[i], standings);
    ++counts[outcome_label(r.status)];
    answer.outcomes.emplace_back(outcome_label(r.status), r.status == service::UpdateStatus::refused
                                                              ? service::refusal_label(r.refusal)
                                                              : "");
  }
  JsonLine out;
  for (const char* kind : {"applied", "duplicate", "refused", "unavailable", "failed"}) {
    out.num(kind, counts[kind]);
  }
  return out.raw("results", list + "]").done();
}

}  // namespace bk::api
