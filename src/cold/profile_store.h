// Members' profiles on a board as PostgreSQL keeps them (sql/008_profiles.sql): written a field
// at a time, read by member. Part of cold::ColdStore.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cold/types.h"

namespace bk::cold {

namespace pg {
struct Link;
}

class ProfileStore {
 public:
  explicit ProfileStore(std::shared_ptr<pg::Link> link);

  // See ColdStore::upsert_profiles, profiles and has_profiles.
  void upsert(const std::string& board, ProfileField field,
              const std::vector<std::pair<std::string, std::string>>& values);
  std::vector<Profile> of(const std::string& board, const std::vector<std::string>& members);
  bool any(const std::string& board, ProfileField field);
  // See ColdStore::lock_profiles and unlock_profiles.
  void lock(const std::string& board);
  void unlock(const std::string& board);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
