// Member profiles in tick: moved from Redis to PostgreSQL once their member is hot nowhere,
// copied before an archive, and the "moved" mark set again after Redis lost data.
#include "lifecycle/profiles.h"

#include <utility>

#include "hot/profiles.h"

namespace bk::lifecycle {
namespace {

// Fields asked for per page of a profile hash.
constexpr std::int64_t kProfilesPerPage = 1000;

}  // namespace

ProfileStats sync_profiles(redis::Connection& redis, hot::BoardScripts& hot, cold::ColdStore& cold,
                           const std::string& board, const std::vector<std::string>& live,
                           bool copy_all) {
  const hot::BoardKeys keys(hot.key_prefix(), board);
  ProfileStats stats;
  using Field = cold::ColdStore::ProfileField;
  // From the Redis read to the PostgreSQL write: an erase or a drop of the board's profiles
  // waits for it (or it for them), so a profile read before they deleted it is never written
  // back after.
  const cold::ProfileLock lock(cold, board);
  for (const auto& [hash, field] :
       {std::pair{keys.names(), Field::name}, std::pair{keys.metadata(), Field::metadata}}) {
    std::string cursor = "0";
    do {
      hot::ProfilePage page = hot::profile_page(redis, hash, cursor, kProfilesPerPage);
      cursor = std::move(page.cursor);
      hot::BoardScripts::Holds& pairs = page.profiles;  // (member, value)
      std::vector<std::string> members;
      members.reserve(pairs.size());
      for (const auto& pair : pairs) members.push_back(pair.first);
      hot::BoardScripts::Holds moving;
      for (const std::size_t i : hot.hot_nowhere(redis, hash, live, members)) {
        moving.push_back(pairs[i]);
      }
      const hot::BoardScripts::Holds& writing = copy_all ? pairs : moving;
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
    if (hot::has_moved_mark(redis, hash)) continue;
    if (cold.has_profiles(board, field)) hot::set_moved_mark(redis, hash);
  }
}

}  // namespace bk::lifecycle
