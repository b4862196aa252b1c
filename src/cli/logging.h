// Logs go to stderr: text for people, one JSON object per line for collectors.
#pragma once
#include <string_view>

#include "cli/context.h"

namespace bk::cli {

// Throws UsageError for an unknown level (trace debug info warn error critical off).
void setup_logging(std::string_view level, Format format);
// The format setup_logging was given (text before it is called).
Format log_format();

// Logs `message` at info; with the JSON format, `fields` (a JsonLine's fields, e.g.
// "boards":3,"spilled":12) become fields of the same object, so one event stays one line.
void log_info_with_fields(const std::string& message, const std::string& fields);

}  // namespace bk::cli
