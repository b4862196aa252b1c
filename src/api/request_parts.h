// What every route of the API reads from a request (api.cpp's read routes and admin.cpp's
// admin routes): percent-decoded, validated parts of the target, the query's parameters, the
// bearer token, and the error a route throws (answered as {"error": ...} with its status).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk::api {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Thrown by a route; Api::handle answers it.
struct HttpError {
  int status;
  std::string message;  // client text in it quoted (core/json.h quoted(), json_string())
  Headers headers{};
};

[[noreturn]] void bad(std::string message);  // a 400

// A percent-encoded part of the target; in a query '+' is a space (as browsers, Python's
// urlencode and Node's URLSearchParams send it). A 400 naming `what` when it does not decode.
std::string decode(std::string_view raw, bool query, const std::string& what);

// A member id from the target: decoded and valid (core/validate.h), else a 400.
std::string member_of(std::string_view raw, bool query);

// The query's parameters, raw (still encoded), each at most once and each one `allowed`.
std::map<std::string, std::string_view> parameters(std::string_view query,
                                                   const std::set<std::string>& allowed);

// A whole-number parameter in [min, max] (`fallback` when absent), else a 400.
std::int64_t number(const std::map<std::string, std::string_view>& params, const std::string& name,
                    std::int64_t fallback, std::int64_t min, std::int64_t max);

// The decoded period_id parameter, if given.
std::optional<std::string> period_id(const std::map<std::string, std::string_view>& params);

// {"error": message}, the message made valid UTF-8.
std::string error_body(const std::string& message);

// The token of `Bearer <token>`: the scheme in any case (RFC 7235), one or more spaces after
// it. nullopt without that scheme or without a token.
std::optional<std::string_view> bearer_token(std::string_view authorization);

}  // namespace bk::api
