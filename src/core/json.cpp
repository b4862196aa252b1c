// JSON writing shared by the CLI's --json output and the HTTP read API.
#include "core/json.h"

#include <cstdio>

namespace bk {

std::string escape_control(std::string_view s, bool json) {
  std::string out;
  out.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"':
        out += json ? "\\\"" : "\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, json ? "\\u%04x" : "\\x%02x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string quoted(std::string_view s) {
  return "'" + escape_control(s, false) + "'";
}

std::string json_string(std::string_view s) {
  return "\"" + escape_control(s, true) + "\"";
}

void JsonLine::key(std::string_view k) {
  if (!body_.empty()) body_ += ",";
  body_ += json_string(k) + ":";
}

JsonLine& JsonLine::str(std::string_view k, std::string_view value) {
  key(k);
  body_ += json_string(value);
  return *this;
}

JsonLine& JsonLine::num(std::string_view k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::time(std::string_view k, const std::optional<Instant>& value) {
  key(k);
  body_ += value ? json_string(format_rfc3339(*value)) : "null";
  return *this;
}

JsonLine& JsonLine::flag(std::string_view k, bool value) {
  key(k);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::raw(std::string_view k, std::string_view json) {
  key(k);
  body_ += json;
  return *this;
}

JsonLine& JsonLine::profile(const std::optional<std::string>& name,
                            const std::optional<std::string>& metadata,
                            const std::vector<std::string>& unavailable) {
  if (name) str("name", *name);
  if (metadata) raw("metadata", *metadata);
  if (!unavailable.empty()) {
    std::string list;
    for (const std::string& field : unavailable)
      list += (list.empty() ? "" : ",") + json_string(field);
    raw("unavailable", "[" + list + "]");
  }
  return *this;
}

}  // namespace bk
