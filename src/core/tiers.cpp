// Tiers: which rule a standing meets, the percentile cut-off, and the static checks of a
// board's rules (a name, a rule that can never match).
#include "core/tiers.h"

#include <algorithm>

namespace bk {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool meets(const TierRule& rule, Placing p, std::int64_t members) {
  switch (rule.kind) {
    case TierKind::top:
      return p.rank <= rule.value;
    case TierKind::percent:
      return p.rank <= percent_cutoff(members, rule.value);
    case TierKind::min_points:
      return p.points >= rule.value;
    case TierKind::max_points:
      return p.points <= rule.value;
  }
  return false;
}

}  // namespace

std::int64_t percent_cutoff(std::int64_t members, std::int64_t millionths) {
  if (members <= 0 || millionths <= 0) return 0;
  // members * millionths stays below 2^63 up to 9.2e12 members; the SQL is the same integer
  // expression, so both sides agree at every count.
  return (members * millionths + kPercentScale - 1) / kPercentScale;
}

const TierRule* tier_of(const Tiers& tiers, Placing p, std::int64_t members) {
  for (const TierRule& rule : tiers) {
    if (meets(rule, p, members)) return &rule;
  }
  return nullptr;
}

bool needs_members(const Tiers& tiers, Placing p) {
  for (const TierRule& rule : tiers) {
    if (rule.kind == TierKind::percent) return true;
    if (meets(rule, p, 0)) return false;
  }
  return false;
}

std::optional<std::int64_t> parse_percent(std::string_view text) {
  if (text.size() < 2 || text.back() != '%') return std::nullopt;
  text.remove_suffix(1);
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 3 || !std::all_of(whole.begin(), whole.end(), is_digit))
    return std::nullopt;
  if (dot != std::string_view::npos && (fraction.empty() || fraction.size() > 4 ||
                                        !std::all_of(fraction.begin(), fraction.end(), is_digit)))
    return std::nullopt;
  std::int64_t value = 0;
  for (const char c : whole) value = value * 10 + (c - '0');
  value *= 10'000;
  std::int64_t unit = 1'000;
  for (const char c : fraction) {
    value += (c - '0') * unit;
    unit /= 10;
  }
  if (value <= 0 || value > kPercentScale) return std::nullopt;
  return value;
}

std::string format_percent(std::int64_t millionths) {
  std::string out = std::to_string(millionths / 10'000);
  std::string fraction = std::to_string(millionths % 10'000);
  if (millionths % 10'000 != 0) {
    fraction.insert(0, 4 - fraction.size(), '0');
    while (fraction.back() == '0') fraction.pop_back();
    out += "." + fraction;
  }
  return out + "%";
}

std::string describe_criterion(const TierRule& rule) {
  switch (rule.kind) {
    case TierKind::top:
      return "top " + std::to_string(rule.value);
    case TierKind::percent:
      return "top " + format_percent(rule.value);
    case TierKind::min_points:
      return "min_points " + std::to_string(rule.value);
    case TierKind::max_points:
      return "max_points " + std::to_string(rule.value);
  }
  return "";
}

std::optional<std::string> tier_name_problem(std::string_view name) {
  if (name.empty()) return "a tier name is empty";
  if (name.size() > kMaxTierName) {
    return "a tier name has at most " + std::to_string(kMaxTierName) + " bytes, not " +
           std::to_string(name.size());
  }
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '-' || c == '.';
  });
  if (!plain) return "a tier name may only contain letters, digits, _ - and .";
  return std::nullopt;
}

std::optional<std::string> shadowed_by(const TierRule& earlier, const TierRule& later) {
  if (earlier.kind != later.kind) return std::nullopt;
  bool covered = false;
  switch (later.kind) {
    case TierKind::top:
    case TierKind::percent:  // the cut-off grows with the share, whatever the members
    case TierKind::max_points:
      covered = later.value <= earlier.value;
      break;
    case TierKind::min_points:
      covered = later.value >= earlier.value;
      break;
  }
  if (!covered) return std::nullopt;
  return "tier '" + later.name + "' (" + describe_criterion(later) +
         ") can never match: every standing it admits already meets tier '" + earlier.name + "' (" +
         describe_criterion(earlier) + ") listed before it; list the narrower rule first";
}

std::optional<std::string> matches_everyone(const TierRule& rule, std::int64_t min_points,
                                            std::int64_t max_points) {
  const std::string what = "tier '" + rule.name + "' (" + describe_criterion(rule) + ")";
  if (rule.kind == TierKind::percent && rule.value == kPercentScale) {
    return what + " admits every member";
  }
  if (rule.kind == TierKind::min_points && rule.value <= min_points) {
    return what + " admits every member (the board's min_points is " + std::to_string(min_points) +
           ")";
  }
  if (rule.kind == TierKind::max_points && rule.value >= max_points) {
    return what + " admits every member (the board's max_points is " + std::to_string(max_points) +
           ")";
  }
  return std::nullopt;
}

std::optional<std::string> matches_no_one(const TierRule& rule, std::int64_t min_points,
                                          std::int64_t max_points) {
  const std::string what = "tier '" + rule.name + "' (" + describe_criterion(rule) + ")";
  if (rule.kind == TierKind::min_points && rule.value > max_points) {
    return what + " can never match: the board's max_points is " + std::to_string(max_points);
  }
  if (rule.kind == TierKind::max_points && rule.value < min_points) {
    return what + " can never match: the board's min_points is " + std::to_string(min_points);
  }
  return std::nullopt;
}

}  // namespace bk
