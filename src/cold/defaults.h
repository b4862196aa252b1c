// Defaults of the cold tier that the configuration shows as its own settings: each one here,
// once (config.h points at them).
#pragma once
#include <cstdint>

namespace bk::cold {

// `history.large_period_rows`: see History::set_large_period_rows.
inline constexpr std::int64_t kDefaultLargePeriodRows = 100000;

}  // namespace bk::cold
