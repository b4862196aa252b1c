// Duration parsing: a whole number and one unit, nothing else, no overflow.
#include "core/duration.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <utility>

namespace bk {
namespace {

constexpr std::array<std::pair<std::string_view, std::int64_t>, 6> kUnits{{
    {"w", 7LL * 24 * 3600 * 1000},
    {"d", 24LL * 3600 * 1000},
    {"h", 3600LL * 1000},
    {"m", 60LL * 1000},
    {"s", 1000},
    {"ms", 1},
}};

}  // namespace

std::optional<Millis> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  std::int64_t n = 0;
  if (std::from_chars(text.data(), text.data() + digits, n).ec != std::errc{}) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      if (n > std::numeric_limits<std::int64_t>::max() / factor) return std::nullopt;
      return Millis{n * factor};
    }
  }
  return std::nullopt;
}

std::string format_duration(Millis d) {
  const std::int64_t ms = d.count();
  for (const auto& [name, factor] : kUnits) {
    if (ms != 0 && ms % factor == 0) return std::to_string(ms / factor) + std::string(name);
  }
  return std::to_string(ms) + "ms";
}

}  // namespace bk
