// Durations as written in the config: "<n>ms", "<n>s", "<n>m", "<n>h", "<n>d", "<n>w".
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"

namespace bk {

std::optional<Millis> parse_duration(std::string_view text);
// The shortest exact text for a duration, e.g. 90000ms -> "90s", 172800000ms -> "2d".
std::string format_duration(Millis d);

}  // namespace bk
