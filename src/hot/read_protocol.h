// The read scripts' replies (read_range/around/member/state/neighbours/after.lua and the meta
// hash's generation), typed and parsed in one place, tested without a server
// (tests/hot/read_protocol_test.cpp). Each script's header comment is the other half.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rank.h"
#include "redis/reply.h"

namespace bk::hot {

// A hot member with its competition rank.
struct Listed {
  std::string member;
  std::int64_t encoded = 0;
  std::int64_t rank = 0;
};

// Reads answered by Redis alone: of a period that has not spilled, or of its hot part.
// `spilled` (decided atomically with the rest) says the cold tier is needed, and then nothing
// was read: the caller reads both tiers instead.
template <class T>
struct HotRead {
  bool spilled = false;
  T value{};
};

// The profiles of the members a read listed, in Redis, read with them (in their order), and
// the hashes' markers (some names / some metadata are in PostgreSQL).
struct ListedProfiles {
  bool names_moved = false;
  bool metadata_moved = false;
  std::vector<std::optional<std::string>> names, metadata;
};

// What a merged (hot + cold) read needs from Redis, read atomically.
struct ReadState {
  std::string gen;  // spill generation
  // Ever spilled, or (with a cold tier) the board is not synced: the cold tier may hold
  // members.
  bool spilled = false;
  // Spilled: hot members scored below this are listed before every cold member (nullopt:
  // not known, any member may be preceded by cold ones).
  std::optional<std::int64_t> cold_bound;
  std::optional<std::int64_t> member_score;  // the asked member's hot score
  std::vector<std::string> hot_and_stale;    // hot members whose cold rows must be skipped
  std::int64_t size = 0;                     // hot members
  std::vector<ScoredMember> head;            // the first hot members asked for, in order
  ListedProfiles head_profiles;              // with `profiles`: the head's
};

// Hot members around a position in listing order.
struct Neighbours {
  std::string gen;
  std::int64_t count_before = 0;     // hot members listed before the position
  std::vector<ScoredMember> before;  // nearest first
  std::vector<ScoredMember> after;   // nearest first
};

// The hot members listed after a listing key, read atomically with the key's place.
struct AfterKey {
  std::string gen;
  // The cold tier is needed: the period has spilled and these members do not all lie
  // before its cold members (see ReadState::cold_bound). Else `after` is the whole answer.
  bool cold = false;
  std::int64_t through = 0;                // hot members listed at or before the key
  std::int64_t better = 0;                 // hot members scored below the key's score
  std::int64_t size = 0;                   // hot members
  bool spilled = false;                    // the cold tier may hold members (size is not all)
  std::vector<std::string> hot_and_stale;  // with `cold`: hot members whose cold rows to skip
  std::vector<ScoredMember> after;         // up to the count asked for, in listing order
  ListedProfiles profiles;                 // with `profiles`: those of `after`
};

namespace read_protocol {

// The meta hash's fields a read compares to see whether the tiers moved under it.
inline constexpr const char* kSpillGeneration = "gen";
inline constexpr const char* kRehydrateGeneration = "rgen";
// The reply of read_range/around/member when the cold tier is needed.
inline constexpr const char* kSpilled = "spilled";

// Each throws redis::ReplyError naming the script when the reply is not what it sends.
// read_range.lua: {first_rank, member, score, ...}, {} or {"spilled"}; `offset` the first
// entry's 0-based position.
HotRead<std::vector<Listed>> parse_range(const redis::Reply& r, std::int64_t offset);
// read_around.lua: {first_rank, first_position, member, score, ...}, {} or {"spilled"}.
HotRead<std::vector<Listed>> parse_around(const redis::Reply& r);
// read_member.lua: {rank, score, size}, {} or {"spilled"}.
HotRead<std::optional<Listed>> parse_member(const redis::Reply& r, const std::string& member);
// read_state.lua; `with_profiles`: the call passed the profile hashes and asked for a head.
ReadState parse_read_state(const redis::Reply& r, bool with_profiles);
// read_neighbours.lua.
Neighbours parse_neighbours(const redis::Reply& r);
// read_after.lua.
AfterKey parse_after(const redis::Reply& r, bool with_profiles);
// HMGET <meta> gen rgen: "<spill gen>:<rehydrate gen>", a missing field read as 0.
std::string parse_generation(const redis::Reply& r);
// ZRANGE ... WITHSCORES (and any flat member, score list): the pairs in order.
std::vector<ScoredMember> parse_pairs(const redis::Reply& r, std::size_t from, std::size_t count);

}  // namespace read_protocol
}  // namespace bk::hot
