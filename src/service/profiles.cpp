// Profiles written to Redis after the scores, and read from Redis then PostgreSQL.
#include "service/profiles.h"

#include <algorithm>
#include <tuple>

#include <spdlog/spdlog.h>

#include "core/profile.h"

namespace bk::service {
namespace {

bool written(const UpdateResult& r) {
  return r.status == UpdateStatus::applied || r.status == UpdateStatus::duplicate;
}

std::map<std::string, hot::ProfileWrites> profile_writes(const std::vector<Update>& updates,
                                                         const std::vector<UpdateResult>& results) {
  std::map<std::string, hot::ProfileWrites> by_board;
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const Update& u = updates[i];
    if ((!u.name && !u.meta) || !written(results[i])) continue;
    hot::ProfileWrites& w = by_board[u.board];
    if (u.name) w.names.emplace_back(u.member, *u.name);
    if (u.meta) {
      std::string compact;
      metadata_problem(*u.meta, compact);  // valid: plan() checked it
      w.metadata.emplace_back(u.member, std::move(compact));
    }
  }
  return by_board;
}

}  // namespace

void Profiles::write(const std::vector<Update>& updates, std::vector<UpdateResult>& results) {
  const auto by_board = profile_writes(updates, results);
  if (by_board.empty()) return;
  const std::map<std::string, std::string> refused = hot_.write_profiles(by_board);
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const auto it = refused.find(updates[i].board);
    if (it == refused.end() || (!updates[i].name && !updates[i].meta)) continue;
    if (!written(results[i])) continue;
    results[i].status = UpdateStatus::failed;
    results[i].reason = "the points were applied, but Redis refused the profile on board '" +
                        it->first + "': " + it->second;
  }
}

void Profiles::attach(const std::string& board, std::vector<Standing>& rows,
                      const KnownProfiles* known) {
  if (rows.empty()) return;
  KnownProfiles read_now;
  if (known == nullptr || !std::all_of(rows.begin(), rows.end(), [&](const Standing& s) {
        return known->by_member.count(s.member) != 0;
      })) {
    read_now = read(board, rows);
    known = &read_now;
  }
  std::vector<std::string> lacking;
  for (Standing& s : rows) {
    if (const auto it = known->by_member.find(s.member); it != known->by_member.end()) {
      std::tie(s.name, s.metadata) = it->second;
    }
    if (!fields_elsewhere(s, *known).empty()) lacking.push_back(s.member);
  }
  from_cold(board, rows, lacking, *known);
}

std::vector<std::string> Profiles::fields_elsewhere(const Standing& s, const KnownProfiles& known) {
  std::vector<std::string> out;
  if (!s.name && known.names_moved) out.emplace_back("name");
  if (!s.metadata && known.metadata_moved) out.emplace_back("metadata");
  return out;
}

KnownProfiles Profiles::read(const std::string& board, const std::vector<Standing>& rows) {
  std::vector<std::string> members;
  members.reserve(rows.size());
  for (const Standing& s : rows) members.push_back(s.member);
  const hot::StoredProfiles stored = hot_.read_profiles(hot::BoardKeys(prefix_, board), members);
  KnownProfiles out;
  out.names_moved = stored.names_moved;
  out.metadata_moved = stored.metadata_moved;
  for (std::size_t i = 0; i < members.size(); ++i) {
    out.by_member.emplace(members[i], std::pair{stored.names.at(i), stored.metadata.at(i)});
  }
  return out;
}

// Scores matter more than names: when PostgreSQL cannot be reached the read goes on without
// these profiles.
void Profiles::from_cold(const std::string& board, std::vector<Standing>& rows,
                         const std::vector<std::string>& lacking, const KnownProfiles& known) {
  if (lacking.empty() || !cold_.present()) return;
  std::vector<cold::Profile> found;
  try {
    found = cold_.profiles(board, lacking);
  } catch (const UnavailableError& e) {
    if (e.backend() != Backend::postgres) throw;
    spdlog::warn("profiles of {} members of board '{}' left out: {}", lacking.size(), board,
                 e.what());
    for (Standing& s : rows) s.unavailable = fields_elsewhere(s, known);
    return;
  }
  std::unordered_map<std::string, const cold::Profile*> by_member;
  for (const cold::Profile& p : found) by_member.emplace(p.member, &p);
  for (Standing& s : rows) {
    const auto it = by_member.find(s.member);
    if (it == by_member.end()) continue;
    if (!s.name) s.name = it->second->name;
    if (!s.metadata) s.metadata = it->second->metadata;
  }
}

}  // namespace bk::service
