// Defaults that more than one layer needs (the config shows them as its settings' defaults,
// the layer that uses them starts from them when no config is given): each one here, once.
#pragma once
#include <cstdint>

namespace bk {

// `history.large_period_rows`: an archived period of at least this many rows gets a history
// table of its own (see cold::History::set_large_period_rows).
inline constexpr std::int64_t kDefaultLargePeriodRows = 100000;

}  // namespace bk
