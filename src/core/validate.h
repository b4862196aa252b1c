// What member ids and board names may be; each check returns why not, or nothing.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace bk {

inline constexpr std::size_t kMaxMemberBytes = 512;
inline constexpr std::size_t kMaxBoardBytes = 128;
inline constexpr std::size_t kMaxEventIdBytes = 512;  // like member ids

// 1 to 512 bytes of valid UTF-8 without NUL.
std::optional<std::string> member_problem(std::string_view member);
// An event id (and so an idempotency key, which becomes one): 1 to 512 bytes of valid UTF-8
// without control characters (U+0000-U+001F, U+007F-U+009F), which ids are never meant to
// hold and logs and terminals would act on. Every way in (add, ingest, HTTP) asks this.
std::optional<std::string> event_id_problem(std::string_view id);
// `s` with each byte that is not part of valid UTF-8 replaced by U+FFFD: for showing what a
// client sent inside JSON, which must be UTF-8.
std::string valid_utf8(std::string_view s);
// 1 to 128 bytes of letters, digits and _ - . : /
std::optional<std::string> board_name_problem(std::string_view name);
// A board name, or a glob of one (also * ? [ ] allowed).
std::optional<std::string> board_pattern_problem(std::string_view pattern);
// fnmatch-style match of a board name against a pattern.
bool board_matches(std::string_view pattern, std::string_view name);

}  // namespace bk
