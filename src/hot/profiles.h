// Members' profiles in Redis (the board's names and metadata HASHes, see hot/keys.h): written
// and read through named functions with typed replies, so the service spells no HSET or HMGET.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hot/keys.h"
#include "redis/connection.h"

namespace bk::hot {

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

}  // namespace bk::hot
