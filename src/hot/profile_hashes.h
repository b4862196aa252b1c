// A board's profile hashes (BoardKeys::names / metadata, member -> value) as tick walks them:
// a page of (member, value) pairs at a time, and the hash's field "" that tells readers some
// profiles of the board moved to PostgreSQL. Callers above `hot` spell no hash command.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "redis/connection.h"

namespace bk::hot {

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
