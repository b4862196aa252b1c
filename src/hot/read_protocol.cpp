// Parsing of the read scripts' replies: positions named once, counts checked before use.
#include "hot/read_protocol.h"

#include "redis/error.h"

namespace bk::hot::read_protocol {
namespace {

bool says_spilled(const redis::Reply& r) {
  return r.elements.size() == 1 && r.at(0).type == redis::Reply::Type::string &&
         r.at(0).str == kSpilled;
}

std::optional<std::string> text(const redis::Reply& r) {
  return r.is_nil() ? std::nullopt : std::optional<std::string>(r.as_string());
}

// A count the reply announces, checked against what it holds from `from` on (`per` elements
// each).
std::size_t announced(const redis::Reply& r, std::size_t at, std::size_t from, std::size_t per,
                      const char* script) {
  const std::int64_t n = r.at(at).as_int();
  if (n < 0 || from + static_cast<std::size_t>(n) * per > r.elements.size()) {
    throw redis::ReplyError(std::string(script) + " announced " + std::to_string(n) +
                            " entries in a reply of " + std::to_string(r.elements.size()) +
                            " elements");
  }
  return static_cast<std::size_t>(n);
}

// {first_rank, [first_position,] member, score, ...} from `first_entry` on, ranked.
std::vector<Listed> listing(const redis::Reply& r, std::int64_t first_position,
                            std::size_t first_entry) {
  std::vector<Listed> out;
  if (r.elements.empty()) return out;
  if ((r.elements.size() - first_entry) % 2 != 0) {
    throw redis::ReplyError("a read script's listing has an odd number of elements (" +
                            std::to_string(r.elements.size()) + ")");
  }
  std::vector<ScoredMember> scored =
      parse_pairs(r, first_entry, (r.elements.size() - first_entry) / 2);
  const auto ranks = competition_ranks(scored, SliceStart{first_position, r.at(0).as_int()});
  out.reserve(scored.size());
  for (std::size_t i = 0; i < scored.size(); ++i) {
    out.push_back(Listed{std::move(scored[i].member), scored[i].encoded, ranks[i]});
  }
  return out;
}

}  // namespace

std::vector<ScoredMember> parse_pairs(const redis::Reply& r, std::size_t from, std::size_t count) {
  std::vector<ScoredMember> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back({r.at(from + 2 * i).as_string(), r.at(from + 2 * i + 1).as_int()});
  }
  return out;
}

HotRead<std::vector<Listed>> parse_range(const redis::Reply& r, std::int64_t offset) {
  r.checked();
  if (says_spilled(r)) return {true, {}};
  return {false, listing(r, offset, 1)};
}

HotRead<std::vector<Listed>> parse_around(const redis::Reply& r) {
  r.checked();
  if (says_spilled(r)) return {true, {}};
  if (r.elements.empty()) return {};
  return {false, listing(r, r.at(1).as_int(), 2)};
}

HotRead<std::optional<Listed>> parse_member(const redis::Reply& r, const std::string& member) {
  r.checked();
  if (says_spilled(r)) return {true, std::nullopt};
  if (r.elements.empty()) return {};
  return {false, Listed{member, r.at(1).as_int(), r.at(0).as_int()}};
}

namespace {

// {..., names marker, metadata marker, name, metadata, ...}: the profiles of `n` members
// from `at` on.
ListedProfiles listed_profiles(const redis::Reply& r, std::size_t at, std::size_t n) {
  ListedProfiles out;
  out.names_moved = r.at(at++).as_int() == 1;
  out.metadata_moved = r.at(at++).as_int() == 1;
  for (std::size_t i = 0; i < n; ++i, at += 2) {
    out.names.push_back(text(r.at(at)));
    out.metadata.push_back(text(r.at(at + 1)));
  }
  return out;
}

}  // namespace

ReadState parse_read_state(const redis::Reply& r, bool with_profiles) {
  ReadState st;
  st.gen = r.at(0).as_string();
  st.spilled = r.at(1).as_string() == "1";
  if (!r.at(2).as_string().empty()) st.cold_bound = r.at(2).as_int();
  if (!r.at(3).as_string().empty()) st.member_score = r.at(3).as_int();
  st.size = r.at(4).as_int();
  const std::size_t stale = announced(r, 5, 6, 1, "read_state.lua");
  for (std::size_t i = 6; i < 6 + stale; ++i) st.hot_and_stale.push_back(r.at(i).as_string());
  const std::size_t rest = r.elements.size() - 6 - stale;
  // Per head member: member and score, and with profiles name and metadata (+ the markers).
  const std::size_t n = with_profiles ? (rest < 2 ? 0 : (rest - 2) / 4) : rest / 2;
  if ((with_profiles ? 2 + 4 * n : 2 * n) != rest) {
    throw redis::ReplyError("read_state.lua sent " + std::to_string(rest) +
                            " elements after its stale members: not whole head entries");
  }
  st.head = parse_pairs(r, 6 + stale, n);
  if (with_profiles) st.head_profiles = listed_profiles(r, 6 + stale + 2 * n, n);
  return st;
}

Neighbours parse_neighbours(const redis::Reply& r) {
  Neighbours n;
  n.gen = r.at(0).as_string();
  n.count_before = r.at(1).as_int();
  const std::size_t before = announced(r, 2, 3, 2, "read_neighbours.lua");
  n.before = parse_pairs(r, 3, before);
  n.after = parse_pairs(r, 3 + 2 * before, (r.elements.size() - 3 - 2 * before) / 2);
  return n;
}

AfterKey parse_after(const redis::Reply& r, bool with_profiles) {
  AfterKey out;
  out.gen = r.at(0).as_string();
  out.cold = r.at(1).as_string() == "1";
  out.through = r.at(2).as_int();
  out.better = r.at(3).as_int();
  out.size = r.at(4).as_int();
  out.spilled = r.at(5).as_string() == "1";
  const std::size_t stale = announced(r, 6, 7, 1, "read_after.lua");
  for (std::size_t i = 7; i < 7 + stale; ++i) out.hot_and_stale.push_back(r.at(i).as_string());
  const std::size_t at = 7 + stale;
  const std::size_t n = announced(r, at, at + 1, 2, "read_after.lua");
  const std::size_t end = at + 1 + 2 * n + (with_profiles ? 2 + 2 * n : 0);
  if (end != r.elements.size()) {
    throw redis::ReplyError("read_after.lua sent " + std::to_string(r.elements.size()) +
                            " elements, not the " + std::to_string(end) + " it announced");
  }
  out.after = parse_pairs(r, at + 1, n);
  if (with_profiles) out.profiles = listed_profiles(r, at + 1 + 2 * n, n);
  return out;
}

std::string parse_generation(const redis::Reply& r) {
  const auto part = [&](std::size_t i) {
    return r.at(i).is_nil() ? std::string("0") : r.at(i).as_string();
  };
  return part(0) + ":" + part(1);
}

}  // namespace bk::hot::read_protocol
