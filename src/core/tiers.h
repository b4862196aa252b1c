// A board's tiers (`tiers:` in its config entry): named rules evaluated in order, the first a
// standing meets names its tier. Pure rules: the rank, the points and the period's member count
// are passed in; the archive writes the same rules as SQL (cold/history.cpp, tier_sql).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class TierKind {
  top,         // competition rank <= value
  percent,     // competition rank <= percent_cutoff(members, value)
  min_points,  // points >= value (boards ordered desc)
  max_points,  // points <= value (boards ordered asc)
};

struct TierRule {
  std::string name;
  TierKind kind = TierKind::top;
  // top: the worst rank that qualifies (>= 1); percent: the share of the period's members in
  // millionths of the whole (1% = 10,000, in (0, kPercentScale]); min_points / max_points: the
  // bound on the points, inclusive.
  std::int64_t value = 0;
};

// The rules in the order written; empty: the board has no tiers.
using Tiers = std::vector<TierRule>;

inline constexpr std::int64_t kPercentScale = 1'000'000;  // 100%, in millionths
inline constexpr std::size_t kMaxTierRules = 32;
inline constexpr std::size_t kMaxTierName = 64;

// A standing as tiers see it.
struct Placing {
  std::int64_t rank = 0;  // competition rank: 1 + the members strictly better
  std::int64_t points = 0;
};

// The worst rank a percent rule of `millionths` admits among `members` ranked members:
// ceil(members * share), in integers (the archive's SQL computes the same). At least 1 for a
// period with members, so its best rank always qualifies; 0 for an empty period.
std::int64_t percent_cutoff(std::int64_t members, std::int64_t millionths);

// The first rule `p` meets, or nullptr when none does. `members`: the period's ranked
// members, read only when a percent rule is reached (see needs_members).
const TierRule* tier_of(const Tiers& tiers, Placing p, std::int64_t members);

// Whether tier_of(tiers, p, ...) reads `members`: a percent rule comes before every other
// rule `p` meets. A read asks for the member count only then.
bool needs_members(const Tiers& tiers, Placing p);

// "12.5%" as millionths: a number with at most 4 decimals, then '%', in (0, 100]; nullopt
// otherwise.
std::optional<std::int64_t> parse_percent(std::string_view text);
// 10,000 -> "1%", 125,000 -> "12.5%".
std::string format_percent(std::int64_t millionths);
// "top 10", "top 1%", "min_points 500", "max_points 60": a rule's criterion, for messages.
std::string describe_criterion(const TierRule& rule);

// Why a tier name is not one (1 to kMaxTierName bytes of letters, digits, _ - .); nullopt
// when it is one.
std::optional<std::string> tier_name_problem(std::string_view name);

// Why `later` can never match once `earlier` (listed before it) did not: both of one kind
// and every standing `later` admits is admitted by `earlier` (top 10 after top 100, "1%"
// after "5%", min_points 900 after min_points 500, max_points 30 after max_points 60).
// nullopt when it can match, or when that cannot be known from the rules alone (rules of
// different kinds: a rank against a percentile or against points depends on the period).
std::optional<std::string> shadowed_by(const TierRule& earlier, const TierRule& later);

// Why `rule` matches every member whatever the period (a percentile of 100%, a points bound
// the board's whole points range meets: then every rule after it can never match); nullopt
// otherwise. `min_points` and `max_points`: the board's points range.
std::optional<std::string> matches_everyone(const TierRule& rule, std::int64_t min_points,
                                            std::int64_t max_points);
// Why `rule` can never match on a board of this points range (a min_points above its
// max_points, a max_points below its min_points); nullopt otherwise.
std::optional<std::string> matches_no_one(const TierRule& rule, std::int64_t min_points,
                                          std::int64_t max_points);

}  // namespace bk
