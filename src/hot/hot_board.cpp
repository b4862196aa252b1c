// Marshalling between HotBatch and the update script's KEYS/ARGV, and the read scripts.
#include "hot/hot_board.h"

#include "core/rank.h"
#include "embedded/hot_lua.h"
#include "hot/protocol.h"
#include "redis/error.h"

namespace bk::hot {
namespace {

// Replies of the read scripts: {first_rank, [first_position,] member, score, ...}.
std::vector<Listed> parse_listing(const redis::Reply& r, std::int64_t first_position,
                                  std::size_t first_entry) {
  std::vector<Listed> out;
  if (r.elements.empty()) return out;
  std::vector<ScoredMember> scored;
  for (std::size_t i = first_entry; i + 1 < r.elements.size(); i += 2) {
    scored.push_back({r.at(i).as_string(), r.at(i + 1).as_int()});
  }
  const auto ranks = competition_ranks(scored, SliceStart{first_position, r.at(0).as_int()});
  out.reserve(scored.size());
  for (std::size_t i = 0; i < scored.size(); ++i) {
    out.push_back(Listed{std::move(scored[i].member), scored[i].encoded, ranks[i]});
  }
  return out;
}

}  // namespace

HotBoard::HotBoard(std::string key_prefix, bool cold_tier)
    : prefix_(std::move(key_prefix)),
      cold_tier_(cold_tier),
      update_(embedded::hot_lua::update_lua),
      read_range_(embedded::hot_lua::read_range_lua),
      read_around_(embedded::hot_lua::read_around_lua),
      read_member_(embedded::hot_lua::read_member_lua),
      read_state_(embedded::hot_lua::read_state_lua),
      read_neighbours_(embedded::hot_lua::read_neighbours_lua),
      spill_mark_(embedded::hot_lua::spill_mark_lua),
      spill_take_(embedded::hot_lua::spill_take_lua),
      spill_remove_(embedded::hot_lua::spill_remove_lua),
      archive_freeze_(embedded::hot_lua::archive_freeze_lua),
      archive_release_(embedded::hot_lua::archive_release_lua),
      board_sync_(embedded::hot_lua::board_sync_lua),
      held_mark_(embedded::hot_lua::held_mark_lua),
      held_release_(embedded::hot_lua::held_release_lua) {}

PeriodKeys::PeriodKeys(const BoardKeys& board, std::string_view period, std::string_view period_id)
    : live(board.live(period, period_id)),
      meta(board.meta(period, period_id)),
      stale(board.stale(period, period_id)),
      synced(board.synced()) {}

std::vector<std::vector<HotResult>> HotBoard::apply(redis::Connection& conn,
                                                    const std::vector<HotBatch>& batches,
                                                    const std::function<void()>& while_waiting) {
  std::vector<std::pair<redis::Args, redis::Args>> calls;
  calls.reserve(batches.size());
  for (const HotBatch& b : batches) {
    protocol::Call c = protocol::marshal_update(prefix_, b, cold_tier_);
    calls.emplace_back(std::move(c.keys), std::move(c.args));
  }
  const std::vector<redis::Reply> replies = update_.eval_pipelined(conn, calls, while_waiting);
  std::vector<std::vector<HotResult>> out;
  out.reserve(replies.size());
  for (std::size_t i = 0; i < replies.size(); ++i) {
    out.push_back(protocol::parse_update_replies(replies[i].checked(), batches[i].events.size()));
  }
  return out;
}

namespace {

bool says_spilled(const redis::Reply& r) {
  return r.elements.size() == 1 && r.at(0).type == redis::Reply::Type::string &&
         r.at(0).str == "spilled";
}

}  // namespace

HotBoard::HotRead<std::vector<Listed>> HotBoard::range(redis::Connection& conn,
                                                       const PeriodKeys& keys, std::int64_t offset,
                                                       std::int64_t count) {
  if (count <= 0) return {};
  const redis::Reply r = read_range_
                             .eval(conn, {keys.live, keys.meta, keys.synced},
                                   {std::to_string(offset), std::to_string(offset + count - 1),
                                    cold_tier_ ? "1" : "0"})
                             .checked();
  if (says_spilled(r)) return {true, {}};
  return {false, parse_listing(r, offset, 1)};
}

HotBoard::HotRead<std::vector<Listed>> HotBoard::around(redis::Connection& conn,
                                                        const PeriodKeys& keys,
                                                        const std::string& member, std::int64_t k) {
  const redis::Reply r = read_around_
                             .eval(conn, {keys.live, keys.meta, keys.synced},
                                   {member, std::to_string(k), cold_tier_ ? "1" : "0"})
                             .checked();
  if (says_spilled(r)) return {true, {}};
  if (r.elements.empty()) return {};
  return {false, parse_listing(r, r.at(1).as_int(), 2)};
}

HotBoard::HotRead<std::optional<Listed>> HotBoard::member(redis::Connection& conn,
                                                          const PeriodKeys& keys,
                                                          const std::string& member) {
  const redis::Reply r =
      read_member_.eval(conn, {keys.live, keys.meta, keys.synced}, {member, cold_tier_ ? "1" : "0"})
          .checked();
  if (says_spilled(r)) return {true, std::nullopt};
  if (r.elements.empty()) return {};
  return {false, Listed{member, r.at(1).as_int(), r.at(0).as_int()}};
}

std::int64_t HotBoard::size(redis::Connection& conn, const std::string& live_key) {
  return conn.command({"ZCARD", live_key}).as_int();
}

}  // namespace bk::hot

namespace bk::hot {
namespace {

std::vector<ScoredMember> pairs(const redis::Reply& r, std::size_t from, std::size_t count) {
  std::vector<ScoredMember> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back({r.at(from + 2 * i).as_string(), r.at(from + 2 * i + 1).as_int()});
  }
  return out;
}

}  // namespace

std::int64_t HotBoard::count_better(redis::Connection& conn, const std::string& live_key,
                                    std::int64_t encoded) {
  return conn.command({"ZCOUNT", live_key, "-inf", "(" + std::to_string(encoded)}).as_int();
}

std::vector<ScoredMember> HotBoard::slice(redis::Connection& conn, const std::string& live_key,
                                          std::int64_t start, std::int64_t count) {
  if (count <= 0) return {};
  const redis::Reply r = conn.command({"ZRANGE", live_key, std::to_string(start),
                                       std::to_string(start + count - 1), "WITHSCORES"})
                             .checked();
  return pairs(r, 0, r.elements.size() / 2);
}

ReadState HotBoard::read_state(redis::Connection& conn, const PeriodKeys& keys,
                               const std::string& member) {
  const redis::Reply r =
      read_state_.eval(conn, {keys.live, keys.meta, keys.stale}, {member}).checked();
  ReadState st;
  st.gen = r.at(0).as_string();
  st.spilled = r.at(1).as_string() == "1";
  if (!r.at(2).as_string().empty()) st.member_score = r.at(2).as_int();
  for (std::size_t i = 3; i < r.elements.size(); ++i) {
    st.hot_and_stale.push_back(r.at(i).as_string());
  }
  return st;
}

Neighbours HotBoard::neighbours(redis::Connection& conn, const PeriodKeys& keys,
                                std::int64_t encoded, const std::string& member, std::int64_t k) {
  const redis::Reply r =
      read_neighbours_
          .eval(conn, {keys.live, keys.meta}, {std::to_string(encoded), member, std::to_string(k)})
          .checked();
  Neighbours n;
  n.gen = r.at(0).as_string();
  n.count_before = r.at(1).as_int();
  const auto nbefore = static_cast<std::size_t>(r.at(2).as_int());
  n.before = pairs(r, 3, nbefore);
  n.after = pairs(r, 3 + 2 * nbefore, (r.elements.size() - 3 - 2 * nbefore) / 2);
  return n;
}

std::int64_t HotBoard::mark_spilled(redis::Connection& conn, const PeriodKeys& keys,
                                    Instant expire_at) {
  return spill_mark_.eval(conn, {keys.meta, keys.live}, {std::to_string(to_epoch_ms(expire_at))})
      .as_int();
}

HotBoard::SpillTake HotBoard::take_for_spill(redis::Connection& conn, const PeriodKeys& keys,
                                             std::int64_t start, std::int64_t count,
                                             Instant expire_at) {
  const redis::Reply r = spill_take_
                             .eval(conn, {keys.live, keys.stale, keys.meta},
                                   {std::to_string(start), std::to_string(start + count - 1),
                                    std::to_string(to_epoch_ms(expire_at))})
                             .checked();
  SpillTake out;
  if (r.elements.empty()) return out;
  const redis::Reply& entries = r.at(0);
  out.members = pairs(entries, 0, entries.elements.size() / 2);
  const std::string& flags = r.at(1).as_string();
  if (flags.size() != out.members.size()) {
    throw redis::ReplyError("spill_take returned " + std::to_string(flags.size()) + " flags for " +
                            std::to_string(out.members.size()) + " members");
  }
  out.maybe_cold.reserve(flags.size());
  for (const char f : flags) out.maybe_cold.push_back(f == '1');
  return out;
}

std::int64_t HotBoard::remove_spilled(redis::Connection& conn, const PeriodKeys& keys,
                                      std::int64_t start,
                                      const std::vector<ScoredMember>& members) {
  redis::Args args;
  args.reserve(members.size() * 2 + 1);
  args.push_back(std::to_string(start));
  for (const ScoredMember& m : members) {
    args.push_back(m.member);
    args.push_back(std::to_string(m.encoded));
  }
  return spill_remove_.eval(conn, {keys.live, keys.stale, keys.meta}, args).as_int();
}

HotBoard::Frozen HotBoard::freeze(redis::Connection& conn, const PeriodKeys& keys,
                                  Instant expire_at) {
  const redis::Reply r =
      archive_freeze_.eval(conn, {keys.meta, keys.live}, {std::to_string(to_epoch_ms(expire_at))})
          .checked();
  return {r.at(0).as_int() == 1, r.at(1).as_int(), r.at(2).as_int() == 1};
}

std::vector<std::optional<std::int64_t>> HotBoard::scores(redis::Connection& conn,
                                                          const std::string& live_key,
                                                          const std::vector<std::string>& members) {
  std::vector<std::optional<std::int64_t>> out;
  if (members.empty()) return out;
  redis::Args args{"ZMSCORE", live_key};
  args.insert(args.end(), members.begin(), members.end());
  const redis::Reply r = conn.command(args).checked();
  out.reserve(members.size());
  for (const redis::Reply& e : r.elements) {
    if (e.is_nil()) {
      out.emplace_back();
    } else {
      out.emplace_back(e.as_int());
    }
  }
  return out;
}

void HotBoard::release(redis::Connection& conn, const PeriodKeys& keys,
                       const std::string& registry_key, const std::string& registry_member) {
  archive_release_.eval(conn, {keys.live, keys.stale, keys.meta, registry_key}, {registry_member})
      .checked();
}

std::int64_t HotBoard::sync(redis::Connection& conn, const BoardKeys& board,
                            const std::vector<SyncedPeriod>& periods) {
  redis::Args keys{board.synced()};
  redis::Args args;
  for (const SyncedPeriod& p : periods) {
    keys.push_back(p.meta);
    args.push_back(std::to_string(to_epoch_ms(p.expire_at)));
  }
  return board_sync_.eval(conn, keys, args).checked().as_int();
}

namespace {

redis::Args flatten(const HotBoard::Holds& holds) {
  redis::Args args;
  args.reserve(holds.size() * 2);
  for (const auto& [member, token] : holds) {
    args.push_back(member);
    args.push_back(token);
  }
  return args;
}

}  // namespace

void HotBoard::hold(redis::Connection& conn, const BoardKeys& board, const Holds& holds) {
  if (holds.empty()) return;
  held_mark_.eval(conn, {board.held()}, flatten(holds)).checked();
}

void HotBoard::release_holds(redis::Connection& conn, const BoardKeys& board, const Holds& holds) {
  if (holds.empty()) return;
  held_release_.eval(conn, {board.held()}, flatten(holds)).checked();
}

}  // namespace bk::hot
