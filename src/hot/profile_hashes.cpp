// Profile hashes walked a page at a time, and their "moved to PostgreSQL" mark (see
// profile_hashes.h).
#include "hot/profile_hashes.h"

namespace bk::hot {

ProfilePage profile_page(redis::Connection& conn, const std::string& hash,
                         const std::string& cursor, std::int64_t count) {
  return parse_profile_page(
      conn.command({"HSCAN", hash, cursor, "COUNT", std::to_string(count)}).checked());
}

ProfilePage parse_profile_page(const redis::Reply& reply) {
  ProfilePage page;
  page.cursor = reply.checked().at(0).as_string();
  const redis::Reply& fields = reply.at(1);
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    std::string member = fields.at(i).as_string();
    if (member.empty()) continue;  // the mark
    page.profiles.emplace_back(std::move(member), fields.at(i + 1).as_string());
  }
  return page;
}

bool has_moved_mark(redis::Connection& conn, const std::string& hash) {
  return conn.command({"HEXISTS", hash, ""}).checked().as_int() == 1;
}

void set_moved_mark(redis::Connection& conn, const std::string& hash) {
  conn.command({"HSET", hash, "", "1"}).checked();
}

}  // namespace bk::hot
