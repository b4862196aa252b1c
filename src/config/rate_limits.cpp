// serve.rate_limits: a token bucket per route class, `{rate: 500/s, burst: 1000}` each
// (docs/operations.md, Rate limits).
#include <charconv>
#include <cmath>

#include "config/loader.h"

namespace bk::config_detail {
namespace {

const std::vector<std::string_view> kClasses{"read", "write", "admin", "write_per_member"};
const std::vector<std::string_view> kLimitKeys{"rate", "burst"};
constexpr std::int64_t kMaxCount = 1'000'000'000;

// `N/s`, `N/m` or `N/h` (N a whole number in [1, kMaxCount]): requests per second.
std::optional<double> per_second(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + slash, n);
  if (ec != std::errc{} || end != text.data() + slash || n < 1 || n > kMaxCount) {
    return std::nullopt;
  }
  const std::string_view unit = text.substr(slash + 1);
  const double count = static_cast<double>(n);
  if (unit == "s") return count;
  if (unit == "m") return count / 60;
  if (unit == "h") return count / 3600;
  return std::nullopt;
}

}  // namespace

void Loader::parse_rate_limits(const Entry& entry, RateLimitsConfig& limits) {
  const auto map = read_map(entry, "serve.rate_limits");
  if (!map) return;
  const Fields f = fields(*map, "in serve.rate_limits", kClasses);
  for (const auto& [name, into] :
       {std::pair{"read", &limits.read}, std::pair{"write", &limits.write},
        std::pair{"admin", &limits.admin},
        std::pair{"write_per_member", &limits.write_per_member}}) {
    if (const auto e = f.get(name))
      *into = parse_rate_limit(*e, std::string("serve.rate_limits.") + name);
  }
}

std::optional<RateLimit> Loader::parse_rate_limit(const Entry& entry, const std::string& key) {
  if (!entry.value.is_map()) {
    report(entry,
           key + " must be a map such as {rate: 500/s, burst: 1000}, not " + kind_of(entry.value));
    return std::nullopt;
  }
  const Fields f = fields(entry.value, "in " + key, kLimitKeys);
  const auto rate = f.get("rate");
  if (!rate) {
    report(entry, key + " needs a rate, e.g. {rate: 500/s, burst: 1000}");
    return std::nullopt;
  }
  const auto text = read_string(*rate, key + ".rate");
  if (!text) return std::nullopt;
  RateLimit limit;
  if (const auto r = per_second(*text)) {
    limit.per_second = *r;
  } else {
    report(*rate, key + ".rate must be N/s, N/m or N/h with N a whole number from 1 to " +
                      std::to_string(kMaxCount) + " (e.g. 500/s, 300/m), not " + quoted(*text));
    return std::nullopt;
  }
  limit.burst = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(limit.per_second)));
  if (const auto burst = f.get("burst")) {
    const auto b = read_int(*burst, key + ".burst");
    if (!b) return std::nullopt;
    if (*b < 1 || *b > kMaxCount) {
      report(*burst, key + ".burst must be in [1, " + std::to_string(kMaxCount) + "], not " +
                         std::to_string(*b));
      return std::nullopt;
    }
    limit.burst = *b;
  }
  return limit;
}

}  // namespace bk::config_detail
