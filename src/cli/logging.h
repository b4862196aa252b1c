// Logs go to stderr: text for people, one JSON object per line for collectors.
#pragma once
#include <string_view>

#include "cli/context.h"

namespace bk::cli {

// Throws UsageError for an unknown level (trace debug info warn error critical off).
void setup_logging(std::string_view level, Format format);

}  // namespace bk::cli
