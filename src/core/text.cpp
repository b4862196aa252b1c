// Small text helpers shared by the parsers (core/text.h).
#include "core/text.h"

#include <algorithm>
#include <cctype>

namespace bk {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string describe_url_scheme(std::string_view url) {
  const std::size_t colon = url.find(':');
  const std::string_view scheme = url.substr(0, colon);
  const bool plain =
      colon != std::string_view::npos && !scheme.empty() && scheme.size() <= 12 &&
      std::isalpha(static_cast<unsigned char>(scheme[0])) != 0 &&
      std::all_of(scheme.begin(), scheme.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
      });
  if (!plain) return "it has no scheme";
  std::string shown = std::string(scheme) + ":";
  for (std::size_t i = colon + 1; i < url.size() && i < colon + 3 && url[i] == '/'; ++i) {
    shown += '/';
  }
  return "it starts with '" + shown + "'";
}

}  // namespace bk
