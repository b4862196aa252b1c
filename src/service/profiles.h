// Members' profiles on a board (core/profile.h): written after an apply's scores, attached to
// every read's rows: Redis first, PostgreSQL for the fields that moved there.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "service/tiers.h"
#include "service/types.h"

namespace bk::service {

// The profiles Redis holds for some members, and which fields have moved to PostgreSQL for
// some members (the hashes' markers). Read with the rows (read_state's head), they spare
// Profiles::attach a round trip of its own when they cover every row.
struct KnownProfiles {
  bool names_moved = false;
  bool metadata_moved = false;
  std::unordered_map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>>
      by_member;
};

class Profiles {
 public:
  Profiles(std::string key_prefix, HotTier& hot, ColdTier& cold)
      : prefix_(std::move(key_prefix)), hot_(hot), cold_(cold) {}

  // After the scores: the profiles of the updates applied or found duplicates (a retried
  // update sets its profile again, as the first attempt may have ended between the two). A
  // board whose profile HASH Redis refuses for good (a key of the wrong type) fails those
  // updates (their points stand: sent again, they are duplicates that set the profile then);
  // the other boards' profiles are written.
  void write(const std::vector<Update>& updates, std::vector<UpdateResult>& results);

  // Fills each row's profile: from `known` when it covers every row, else one round trip to
  // Redis; PostgreSQL only for a field a member lacks in Redis whose hash marker says some
  // moved there. When PostgreSQL cannot be reached the rows go without those fields, each
  // saying which are unavailable.
  void attach(const std::string& board, std::vector<Standing>& rows,
              const KnownProfiles* known = nullptr);

  // The fields of `s` that Redis lacks and that may be in PostgreSQL.
  static std::vector<std::string> fields_elsewhere(const Standing& s, const KnownProfiles& known);

 private:
  std::string prefix_;
  HotTier& hot_;
  ColdTier& cold_;

  KnownProfiles read(const std::string& board, const std::vector<Standing>& rows);
  void from_cold(const std::string& board, std::vector<Standing>& rows,
                 const std::vector<std::string>& lacking, const KnownProfiles& known);
};

}  // namespace bk::service
