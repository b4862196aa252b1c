// The rate limits at the API's edge (api/api.h, api/rate_limits.h): the 429 of a spent limit
// before the body is read, and the RateLimit-* headers of the answers of a limited class.
#include <string>

#include "api/api.h"
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

}  // namespace

std::optional<Response> Api::refuse_over_limit(const Matched& m, const Caller& who) const {
  if (!limits_ || !limits_->limits(m.access)) return std::nullopt;
  const std::optional<Verdict> v = limits_->admit(m.access, who.id, member_of(*limits_, m));
  if (!v || v->allowed) return std::nullopt;
  Headers headers{{"Retry-After", std::to_string(v->retry_after)}};
  add_limit_headers(*v, headers);
  return Response{429, error_body(spent(*v, who)), "other", std::move(headers), true};
}

std::optional<Verdict> Api::look_limit(const Matched& m, const Caller& who) const {
  if (!limits_ || m.route == nullptr || !limits_->limits(m.access)) return std::nullopt;
  return limits_->look(m.access, who.id, member_of(*limits_, m));
}

void add_limit_headers(const Verdict& v, Headers& headers) {
  headers.push_back({"RateLimit-Limit", std::to_string(v.limit)});
  headers.push_back({"RateLimit-Remaining", std::to_string(v.remaining)});
  headers.push_back({"RateLimit-Reset", std::to_string(v.reset)});
}

}  // namespace bk::api
