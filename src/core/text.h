// Small text helpers shared by the parsers (config, redis/url): prefixes, and how a URL's
// scheme is shown in a message without echoing the rest of it.
#pragma once
#include <string>
#include <string_view>

namespace bk {

// Whether `s` begins with `prefix`.
bool starts_with(std::string_view s, std::string_view prefix);

// What a URL starts with, for messages: "it starts with 'reddis://'" or "it has no scheme".
// Only a plain scheme is shown; the rest of a URL that is not understood is never echoed
// (it may hold a password).
std::string describe_url_scheme(std::string_view url);

}  // namespace bk
