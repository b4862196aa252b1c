#include "lifecycle/profiles.h"

#include <utility>

namespace bk::lifecycle {

ProfileStats sync_profiles(redis::Connection& redis, hot::HotBoard& hot, cold::ColdStore& cold,
                           const std::string& board, const std::vector<std::string>& live,
                           bool copy_all) {
  const hot::BoardKeys keys(hot.key_prefix(), board);
  ProfileStats stats;
  using Field = cold::ColdStore::ProfileField;
  for (const auto& [hash, field] :
       {std::pair{keys.names(), Field::name}, std::pair{keys.metadata(), Field::metadata}}) {
    std::string cursor = "0";
    do {
      const redis::Reply r = redis.command({"HSCAN", hash, cursor, "COUNT", "1000"}).checked();
      cursor = r.at(0).as_string();
      const redis::Reply& fields = r.at(1);
      hot::HotBoard::Holds pairs;  // (member, value)
      std::vector<std::string> members;
      for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
        std::string member = fields.at(i).as_string();
        if (member.empty()) continue;  // the marker
        members.push_back(member);
        pairs.emplace_back(std::move(member), fields.at(i + 1).as_string());
      }
      hot::HotBoard::Holds moving;
      for (const std::size_t i : hot.hot_nowhere(redis, hash, live, members)) {
        moving.push_back(pairs[i]);
      }
      const hot::HotBoard::Holds& writing = copy_all ? pairs : moving;
      cold.upsert_profiles(board, field, writing);
      stats.copied += static_cast<std::int64_t>(writing.size());
      stats.moved += hot.drop_profiles(redis, hash, moving);
    } while (cursor != "0");
  }
  return stats;
}

void mark_profiles(redis::Connection& redis, cold::ColdStore& cold, const std::string& board,
                   const std::string& key_prefix) {
  const hot::BoardKeys keys(key_prefix, board);
  using Field = cold::ColdStore::ProfileField;
  for (const auto& [hash, field] :
       {std::pair{keys.names(), Field::name}, std::pair{keys.metadata(), Field::metadata}}) {
    if (redis.command({"HEXISTS", hash, ""}).checked().as_int() == 1) continue;
    if (cold.has_profiles(board, field)) redis.command({"HSET", hash, "", "1"}).checked();
  }
}

}  // namespace bk::lifecycle
