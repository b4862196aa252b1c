// Profile hashes: HSET to write, HEXISTS of the moved mark and HMGET to read, HSCAN to walk.
#include "hot/profiles.h"

#include <algorithm>

#include "redis/error.h"

namespace bk::hot {
namespace {

// Per chunk of members one HMGET of each hash: commands stay small.
constexpr std::size_t kMembersPerRead = 2000;

void append_hset(std::vector<redis::Args>& commands, std::vector<std::string>& board_of,
                 const std::string& board, const std::string& key,
                 const std::vector<std::pair<std::string, std::string>>& values) {
  if (values.empty()) return;
  redis::Args args{"HSET", key};
  args.reserve(2 + 2 * values.size());
  for (const auto& [member, value] : values) args.insert(args.end(), {member, value});
  commands.push_back(std::move(args));
  board_of.push_back(board);
}

std::optional<std::string> text(const redis::Reply& r) {
  return r.is_nil() ? std::nullopt : std::optional<std::string>(r.as_string());
}

}  // namespace

std::map<std::string, std::string> write_profiles(
    redis::Connection& conn, std::string_view prefix,
    const std::map<std::string, ProfileWrites>& boards) {
  std::vector<redis::Args> commands;
  std::vector<std::string> board_of;  // of each command
  for (const auto& [board, writes] : boards) {
    const BoardKeys keys(prefix, board);
    append_hset(commands, board_of, board, keys.names(), writes.names);
    append_hset(commands, board_of, board, keys.metadata(), writes.metadata);
  }
  std::map<std::string, std::string> refused;  // board -> why
  if (commands.empty()) return refused;
  const std::vector<redis::Reply> replies = conn.pipeline(commands);
  for (std::size_t c = 0; c < replies.size(); ++c) {
    const redis::Reply& r = replies[c];
    if (!r.is_error() || redis::classify_reply_error(r.str) == redis::ErrorClass::transient) {
      r.checked();  // a transient error goes up: the caller retries the whole call
      continue;
    }
    refused.emplace(board_of[c], "key " + commands[c][1] + ": " + r.str);
  }
  return refused;
}

StoredProfiles read_profiles(redis::Connection& conn, const BoardKeys& board,
                             const std::vector<std::string>& members) {
  // The markers first, then per chunk an HMGET of each hash.
  std::vector<redis::Args> commands{{"HEXISTS", board.names(), kMovedMark},
                                    {"HEXISTS", board.metadata(), kMovedMark}};
  for (std::size_t from = 0; from < members.size(); from += kMembersPerRead) {
    const auto first = members.begin() + static_cast<std::ptrdiff_t>(from);
    const auto last = members.begin() +
                      static_cast<std::ptrdiff_t>(std::min(members.size(), from + kMembersPerRead));
    redis::Args names{"HMGET", board.names()};
    redis::Args metas{"HMGET", board.metadata()};
    names.insert(names.end(), first, last);
    metas.insert(metas.end(), first, last);
    commands.push_back(std::move(names));
    commands.push_back(std::move(metas));
  }
  const auto replies = conn.pipeline(commands);
  StoredProfiles out;
  out.names_moved = replies.at(0).checked().as_int() == 1;
  out.metadata_moved = replies.at(1).checked().as_int() == 1;
  out.names.reserve(members.size());
  out.metadata.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::size_t c = 2 + 2 * (i / kMembersPerRead);
    out.names.push_back(text(replies.at(c).checked().at(i % kMembersPerRead)));
    out.metadata.push_back(text(replies.at(c + 1).checked().at(i % kMembersPerRead)));
  }
  return out;
}

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
    if (member == kMovedMark) continue;
    page.profiles.emplace_back(std::move(member), fields.at(i + 1).as_string());
  }
  return page;
}

bool has_moved_mark(redis::Connection& conn, const std::string& hash) {
  return conn.command({"HEXISTS", hash, kMovedMark}).checked().as_int() == 1;
}

void set_moved_mark(redis::Connection& conn, const std::string& hash) {
  conn.command({"HSET", hash, kMovedMark, "1"}).checked();
}

}  // namespace bk::hot
