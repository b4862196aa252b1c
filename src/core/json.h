// Writing JSON: string literals and objects built field by field (the read commands' --json
// lines and the HTTP read API share them). Member ids are valid UTF-8 by the member rules,
// so bytes other than quotes, backslashes and control characters pass through.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"

namespace bk {

// Quotes, backslashes and control characters escaped: for JSON (\u0001) or, with json
// false, for one line of text (\x01; quotes left alone).
std::string escape_control(std::string_view s, bool json);

// Client text inside a message: in single quotes, control characters and backslashes
// escaped (\x00, \n), so that a message carries no raw control byte and is never cut
// at a NUL (std::exception::what() stops there). A quote inside is left as it is: the
// quotes only mark where the text starts and ends.
std::string quoted(std::string_view s);

// A JSON string literal, quotes included; control characters, quotes and backslashes are
// escaped.
std::string json_string(std::string_view s);

// Builds one JSON object field by field, in the order given.
class JsonLine {
 public:
  JsonLine& str(std::string_view key, std::string_view value);
  JsonLine& num(std::string_view key, std::int64_t value);
  JsonLine& flag(std::string_view key, bool value);                           // true / false
  JsonLine& time(std::string_view key, const std::optional<Instant>& value);  // null if absent
  JsonLine& raw(std::string_view key, std::string_view json);  // a value already in JSON
  // A member profile's fields, each only when present (metadata: a JSON object's text), and
  // "unavailable": the names of the fields that could not be fetched, when there are any.
  JsonLine& profile(const std::optional<std::string>& name,
                    const std::optional<std::string>& metadata,
                    const std::vector<std::string>& unavailable = {});
  std::string done() const { return "{" + body_ + "}"; }
  const std::string& fields() const { return body_; }  // without the braces

 private:
  std::string body_;
  void key(std::string_view k);
};

}  // namespace bk
