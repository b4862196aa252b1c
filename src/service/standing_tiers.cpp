// Tiers attached to the standings of an open period's read.
#include "service/standing_tiers.h"

namespace bk::service {

void attach_tiers(const Tiers& tiers, std::vector<Standing>& rows, const MemberCount& members) {
  if (tiers.empty()) return;
  std::optional<std::optional<std::int64_t>> counted;  // asked once
  for (Standing& row : rows) {
    const Placing placing{row.rank, row.points};
    std::int64_t count = 0;
    if (needs_members(tiers, placing)) {
      if (!counted) counted = members();
      if (!*counted) {
        row.tier.reset();
        row.unavailable.emplace_back("tier");
        continue;
      }
      count = **counted;
    }
    const TierRule* rule = tier_of(tiers, placing, count);
    row.tier = rule == nullptr ? std::nullopt : std::optional<std::string>(rule->name);
  }
}

}  // namespace bk::service
