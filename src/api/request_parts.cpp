// What every route of the API reads from a request (api/request_parts.h).
#include "api/request_parts.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "api/split.h"
#include "core/json.h"
#include "core/percent.h"
#include "core/validate.h"

namespace bk::api {

void bad(std::string message) {
  throw HttpError{400, std::move(message)};
}

// A percent-encoded part of the target; in a query '+' is a space (as browsers, Python's
// urlencode and Node's URLSearchParams send it).
std::string decode(std::string_view raw, bool query, const std::string& what) {
  std::string text(raw);
  if (query) std::replace(text.begin(), text.end(), '+', ' ');
  auto decoded = percent_decode(text);
  if (!decoded) bad(what + " is not percent-encoded correctly: " + quoted(raw));
  return std::move(*decoded);
}

std::string member_of(std::string_view raw, bool query) {
  std::string member = decode(raw, query, "the member id");
  if (auto problem = member_problem(member)) {
    // A too long id is not shown (its length is in the problem).
    bad(member.size() > kMaxMemberBytes ? *problem
                                        : "member id " + json_string(member) + ": " + *problem);
  }
  return member;
}

// The query's parameters, raw (still encoded), each at most once and each one `allowed`.
std::map<std::string, std::string_view> parameters(std::string_view query,
                                                   const std::set<std::string>& allowed) {
  std::map<std::string, std::string_view> out;
  if (query.empty()) return out;
  for (const std::string_view pair : split(query, '&')) {
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string name = decode(pair.substr(0, eq), true, "a parameter name");
    if (allowed.count(name) == 0) {
      std::string known;
      for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      bad("unknown parameter " + quoted(name) +
          (known.empty() ? std::string(" (this route takes none)") : " (known: " + known + ")"));
    }
    if (!out.emplace(name, eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1))
             .second) {
      bad("parameter " + quoted(name) + " is given twice");
    }
  }
  return out;
}

std::int64_t number(const std::map<std::string, std::string_view>& params, const std::string& name,
                    std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const auto it = params.find(name);
  if (it == params.end()) return fallback;
  const std::string text = decode(it->second, true, name);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    bad(name + " must be a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
        "], not " + quoted(text));
  }
  return v;
}

std::optional<std::string> period_id(const std::map<std::string, std::string_view>& params) {
  const auto it = params.find("period_id");
  if (it == params.end()) return std::nullopt;
  return decode(it->second, true, "period_id");
}

std::string error_body(const std::string& message) {
  return JsonLine().str("error", valid_utf8(message)).done();
}

// The token of `Bearer <token>`: the scheme in any case (RFC 7235), one or more spaces after
// it. nullopt without that scheme or without a token.
std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) {
      return std::nullopt;
    }
  }
  const std::size_t start = authorization.find_first_not_of(' ', kScheme.size());
  if (start == std::string_view::npos) return std::nullopt;
  return authorization.substr(start);
}

}  // namespace bk::api
