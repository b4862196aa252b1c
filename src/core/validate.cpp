// Member and board name rules.
#include "core/validate.h"

#include <fnmatch.h>

#include <cstdio>

#include "core/json.h"

namespace bk {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid (overlong forms,
// surrogates and code points above U+10FFFF included).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  unsigned cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1FU;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0FU;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07U;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0U) != 0x80U) return 0;
    cp = (cp << 6) | (b & 0x3FU);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
      (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
    return 0;
  }
  return len;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

namespace {

bool name_char(char c, bool glob) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '_':
    case '-':
    case '.':
    case ':':
    case '/':
      return true;
    case '*':
    case '?':
    case '[':
    case ']':
      return glob;
    default:
      return false;
  }
}

std::optional<std::string> name_problem(std::string_view name, bool glob) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxBoardBytes) {
    return "is " + std::to_string(name.size()) + " bytes, more than 128";
  }
  for (const char c : name) {
    if (!name_char(c, glob)) {
      return "has the character " + quoted(std::string_view(&c, 1)) +
             "; allowed are letters, digits and _ - . : /" +
             (glob ? " (and * ? [ ] in globs)" : "");
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> member_problem(std::string_view member) {
  if (member.empty()) return "member id is empty";
  if (member.size() > kMaxMemberBytes) {
    return "member id is " + std::to_string(member.size()) + " bytes, more than 512";
  }
  for (std::size_t i = 0; i < member.size();) {
    if (member[i] == '\0') return "member id contains a NUL byte at offset " + std::to_string(i);
    const std::size_t len = utf8_sequence(member, i);
    if (len == 0) return "member id is not valid UTF-8 at byte offset " + std::to_string(i);
    i += len;
  }
  return std::nullopt;
}

std::optional<std::string> event_id_problem(std::string_view id) {
  if (id.empty()) return "event id is empty";
  if (id.size() > kMaxEventIdBytes) {
    return "event id is " + std::to_string(id.size()) + " bytes, more than " +
           std::to_string(kMaxEventIdBytes);
  }
  for (std::size_t i = 0; i < id.size();) {
    const std::size_t len = utf8_sequence(id, i);
    if (len == 0) return "event id is not valid UTF-8 at byte offset " + std::to_string(i);
    const auto b0 = static_cast<unsigned char>(id[i]);
    const auto b1 = len == 2 ? static_cast<unsigned char>(id[i + 1]) : 0U;
    if (b0 < 0x20 || b0 == 0x7F || (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F)) {
      const unsigned cp = len == 1 ? b0 : b1;  // C1 controls are U+0080..U+009F: C2 80..9F
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", cp);
      return std::string("event id contains the control character ") + code + " at byte offset " +
             std::to_string(i);
    }
    i += len;
  }
  return std::nullopt;
}

std::optional<std::string> board_name_problem(std::string_view name) {
  if (auto p = name_problem(name, false)) return "board name " + *p;
  return std::nullopt;
}

std::optional<std::string> board_pattern_problem(std::string_view pattern) {
  if (auto p = name_problem(pattern, true)) return "board name " + *p;
  return std::nullopt;
}

bool board_matches(std::string_view pattern, std::string_view name) {
  const std::string p(pattern);
  const std::string n(name);
  return fnmatch(p.c_str(), n.c_str(), 0) == 0;
}

}  // namespace bk
