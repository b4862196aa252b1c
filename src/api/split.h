// Splitting the parts of a request target (and of a cursor) on one separator.
#pragma once
#include <string_view>
#include <vector>

namespace bk::api {

// Every piece, empty ones included: "a,,b" -> {"a", "", "b"}; "" -> {""}.
inline std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace bk::api
