// Member profiles: a display name and a small JSON object of the application's own, kept per
// board member beside the scores. What each may be; each check returns why not, or nothing.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace bk {

inline constexpr std::size_t kMaxNameBytes = 128;
inline constexpr std::size_t kMaxMetadataBytes = 2048;

// 1 to 128 bytes of valid UTF-8 without NUL.
std::optional<std::string> display_name_problem(std::string_view name);
// A JSON object of at most 2 KiB (as sent), whose strings hold no NUL (PostgreSQL's jsonb
// cannot store one). On success `compact` is its one-line form (what is stored and
// returned: a JSON line output embeds it as it is).
std::optional<std::string> metadata_problem(std::string_view text, std::string& compact);

// The one compact text of a metadata object, whichever store it comes back from: members in
// key order, no spaces, numbers as the shortest text that reads back the same (a negative
// zero as 0.0, which PostgreSQL's jsonb keeps that way). PostgreSQL's jsonb text
// (`{"team": "green", "level": 0}`) becomes what Redis keeps (`{"level":0,"team":"green"}`).
// `text` must be a JSON object (as stored); anything else comes back unchanged.
std::string compact_metadata(std::string_view text);

}  // namespace bk
