#include "core/profile.h"

#include <nlohmann/json.hpp>

#include "core/validate.h"

namespace bk {
namespace {

bool holds_nul(const nlohmann::json& j) {
  if (j.is_string()) return j.get_ref<const std::string&>().find('\0') != std::string::npos;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key.find('\0') != std::string::npos || holds_nul(value)) return true;
    }
    return false;
  }
  if (j.is_array()) {
    for (const auto& value : j) {
      if (holds_nul(value)) return true;
    }
  }
  return false;
}

// -0.0 as 0.0: jsonb's numeric has no negative zero, so both stores agree.
void unsign_zeros(nlohmann::json& j) {
  if (j.is_number_float() && j.get<double>() == 0.0) {
    j = 0.0;
  } else if (j.is_structured()) {
    for (auto& value : j) unsign_zeros(value);
  }
}

}  // namespace

std::string compact_metadata(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::string(text);
  unsign_zeros(j);
  return j.dump();
}

std::optional<std::string> display_name_problem(std::string_view name) {
  if (name.empty()) return "name is empty";
  if (name.size() > kMaxNameBytes) {
    return "name is " + std::to_string(name.size()) + " bytes, more than " +
           std::to_string(kMaxNameBytes);
  }
  if (name.find('\0') != std::string_view::npos) {
    return "name contains a NUL byte at offset " + std::to_string(name.find('\0'));
  }
  if (valid_utf8(name) != name) return "name is not valid UTF-8";
  return std::nullopt;
}

std::optional<std::string> metadata_problem(std::string_view text, std::string& compact) {
  if (text.size() > kMaxMetadataBytes) {
    return "meta is " + std::to_string(text.size()) + " bytes, more than " +
           std::to_string(kMaxMetadataBytes);
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // The parser's message says where: "... at line 1, column 7: ...".
    const std::string what = e.what();
    const auto colon = what.find("] ");
    return "meta is not valid JSON: " +
           valid_utf8(colon == std::string::npos ? what : what.substr(colon + 2));
  }
  if (!j.is_object()) return std::string("meta is not a JSON object");
  if (holds_nul(j)) return std::string("meta holds a NUL character (\\u0000)");
  unsign_zeros(j);
  compact = j.dump();
  return std::nullopt;
}

}  // namespace bk
