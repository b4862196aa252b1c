// Members' profiles in Redis (the board's names and metadata HASHes, see hot/keys.h, member ->
// value, and the field "" that marks a hash some of whose profiles moved to PostgreSQL):
// written, read and walked through named functions with typed replies, so the service and
// tick spell no hash command.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hot/keys.h"
#include "redis/connection.h"

namespace bk::hot {

// The field of a profile hash that says some of its profiles moved to PostgreSQL (no member
// id is empty, so it names no member).
inline constexpr const char* kMovedMark = "";

// The profile fields to set on one board: (member, value) pairs, the latest of a member wins.
struct ProfileWrites {
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<std::pair<std::string, std::string>> metadata;  // compact JSON text
};

// Sets the fields of every board in one pipeline. Returns, per board whose hash Redis refused
// with a lasting error (a key of the wrong type), why ("key <key>: <error>"); a transient
// error throws (the caller retries the whole call).
std::map<std::string, std::string> write_profiles(
    redis::Connection& conn, std::string_view prefix,
    const std::map<std::string, ProfileWrites>& boards);

// What Redis holds of some members' profiles on one board.
struct StoredProfiles {
  // The hashes' markers: some names / some metadata of the board moved to PostgreSQL.
  bool names_moved = false;
  bool metadata_moved = false;
  // Parallel to the members asked for; nullopt: not in Redis.
  std::vector<std::optional<std::string>> names;
  std::vector<std::optional<std::string>> metadata;
};

// One round trip whatever the number of members (an HMGET of each hash per chunk).
StoredProfiles read_profiles(redis::Connection& conn, const BoardKeys& board,
                             const std::vector<std::string>& members);

// Walking a hash page by page (tick), and its moved mark.

// One page of a profile hash: its (member, value) pairs (the "" field left out: it is no
// member) and the cursor of the next page ("0" once the hash was walked through).
struct ProfilePage {
  std::string cursor;
  std::vector<std::pair<std::string, std::string>> profiles;
};

// HSCAN `hash` from `cursor`, about `count` fields a page. Throws redis errors.
ProfilePage profile_page(redis::Connection& conn, const std::string& hash,
                         const std::string& cursor, std::int64_t count);
// The reply of one HSCAN ([cursor, [field, value...]]) typed; throws redis::ReplyError for
// another shape.
ProfilePage parse_profile_page(const redis::Reply& reply);

// The hash's field "" is set: readers look in PostgreSQL for members the hash lacks.
bool has_moved_mark(redis::Connection& conn, const std::string& hash);
// Sets it (HSET hash "" 1).
void set_moved_mark(redis::Connection& conn, const std::string& hash);

}  // namespace bk::hot
