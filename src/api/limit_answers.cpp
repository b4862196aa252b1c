// The rate limits at the API's edge (api/api.h, api/rate_limits.h): the 429 of a spent limit
// before the body is read, a batch's cost once it is read, and the RateLimit-* headers of the
// answers of a limited class.
#include <string>
#include <unordered_map>
#include <vector>

#include "api/api.h"
#include "core/json.h"
#include "core/percent.h"

namespace bk::api {
namespace {

// The bucket of a score write's member: board and member as the route reads them (0 when
// they do not decode: the route answers 400).
std::uint64_t member_of(const RateLimits& limits, const Matched& m) {
  if (m.access != Access::write || !m.names_member) return 0;
  const auto board = percent_decode(std::string(m.board));
  const auto member = percent_decode(std::string(m.member));
  return board && member ? limits.member_key(*board, *member) : 0;
}

std::string spent(const Verdict& v, const Caller& who) {
  const std::string key = std::string("serve.rate_limits.") + label(v.of);
  const std::string whose = v.of == LimitClass::write_per_member ? "this member's write limit"
                            : who.kind == TokenKind::none
                                ? "the limit that requests without a token share"
                                : "this token's " + std::string(label(v.of)) + " limit";
  return "too many requests: " + whose + " (" + key + ", " + std::to_string(v.limit) +
         " at once) is spent; retry after " + std::to_string(v.retry_after) + " s";
}

// Whose bucket refused a batch: the token's, or a member's of the batch.
std::string bucket_of(const Verdict& v, const std::vector<service::Update>& events,
                      const RateLimits& limits) {
  if (v.of != LimitClass::write_per_member) return "this token's write limit";
  for (const service::Update& u : events) {
    if (limits.member_key(u.board, u.member) == v.whose) {
      return "the write limit of member " + bk::quoted(u.member) + " of board " +
             bk::quoted(u.board);
    }
  }
  return "a member's write limit";
}

}  // namespace

std::optional<Response> Api::refuse_over_limit(const Matched& m, const Caller& who) const {
  if (!limits_ || !limits_->limits(m.access)) return std::nullopt;
  // A batch's cost is known once its body is read (pay_for_batch): a spent bucket still
  // refuses it here, taking nothing.
  const std::optional<Verdict> v = m.route->id == RouteId::events
                                       ? limits_->check(m.access, who.id)
                                       : limits_->admit(m.access, who.id, member_of(*limits_, m));
  if (!v || v->allowed) return std::nullopt;
  Headers headers{{"Retry-After", std::to_string(v->retry_after)}};
  add_limit_headers(*v, headers);
  return Response{429, error_body(spent(*v, who)), "other", std::move(headers), true};
}

std::optional<Verdict> Api::look_limit(const Matched& m, const Caller& who) const {
  if (!limits_ || m.route == nullptr || !limits_->limits(m.access)) return std::nullopt;
  return limits_->look(m.access, who.id, member_of(*limits_, m));
}

void Api::pay_for_batch(std::uint64_t who, const std::vector<service::Update>& events,
                        std::optional<Verdict>& limit) const {
  if (!limits_ || !limits_->limits(Access::write)) return;
  std::unordered_map<std::uint64_t, std::int64_t> per_member;
  for (const service::Update& u : events) ++per_member[limits_->member_key(u.board, u.member)];
  const RateLimits::MemberEvents members(per_member.begin(), per_member.end());
  const std::optional<Verdict> v =
      limits_->admit_batch(who, static_cast<std::int64_t>(events.size()), members);
  if (!v) return;
  if (v->allowed) {
    if (v->of == LimitClass::write) limit = v;  // the token's bucket, after the batch
    return;
  }
  const std::string key = std::string("serve.rate_limits.") + label(v->of);
  const std::string asked =
      v->of == LimitClass::write_per_member
          ? std::to_string(per_member.at(v->whose)) + " of this batch's events"
          : "this batch's " + std::to_string(events.size()) + " events";
  const std::string whose =
      bucket_of(*v, events, *limits_) + " (" + key + ", " + std::to_string(v->limit) + " at once)";
  if (v->never) {
    throw HttpError{413, asked + " are more than " + whose +
                             " can ever hold: a batch pays one request per event; send at most " +
                             std::to_string(v->limit) + " such events a batch"};
  }
  limit = v;  // the RateLimit-* headers of the 429 (Api::handle adds them)
  throw HttpError{429,
                  "too many requests: " + asked + " (one request each) are more than " + whose +
                      " holds now; retry after " + std::to_string(v->retry_after) + " s",
                  {{"Retry-After", std::to_string(v->retry_after)}}};
}

void add_limit_headers(const Verdict& v, Headers& headers) {
  headers.push_back({"RateLimit-Limit", std::to_string(v.limit)});
  headers.push_back({"RateLimit-Remaining", std::to_string(v.remaining)});
  headers.push_back({"RateLimit-Reset", std::to_string(v.reset)});
}

}  // namespace bk::api
