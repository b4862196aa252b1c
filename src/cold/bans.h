// Bans as PostgreSQL keeps them (sql/011_bans.sql): ban (B0), unban (U1), a board's list, and
// its banned members for the board sync. Shares the cold store's connection (ColdStore::link).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/time.h"

namespace bk::cold {

namespace pg {
struct Link;
}

struct BanRow {
  std::string member;
  std::string reason;
  Instant banned_at;
};

class Bans {
 public:
  explicit Bans(std::shared_ptr<pg::Link> link);

  // B0: records the ban (committed before it returns), or updates the reason of an existing
  // one (its banned_at stays). True when the member was not banned before.
  bool ban(const std::string& board, const std::string& member, const std::string& reason,
           Instant at);
  // U1: deletes the ban (committed); true when there was one.
  bool unban(const std::string& board, const std::string& member);
  // The board's bans, by member (bytewise).
  std::vector<BanRow> of(const std::string& board);
  // The board's banned members (the board sync's list).
  std::vector<std::string> members(const std::string& board);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
