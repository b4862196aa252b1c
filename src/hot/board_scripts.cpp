// Marshalling between HotBatch and the update script's KEYS/ARGV, and the read scripts.
#include "hot/board_scripts.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include "core/rank.h"
#include "embedded/hot_lua.h"
#include "hot/protocol.h"
#include "redis/error.h"

namespace bk::hot {
namespace {

// The type each key of an update call must have (see update.lua's KEYS), "" for any: the
// registry ZSET, the sync marker, the held HASH, the id buckets (SETs), the in-flight ZSET,
// then per period the live ZSET, its :meta HASH and its :stale SET.
const char* expected_type(const std::vector<std::string>& keys, std::size_t i) {
  if (i == 0) return "zset";
  if (i == 1) return "";
  if (i == 2) return "hash";
  if (keys[i].find(":inflight:") != std::string::npos) return "zset";
  if (keys[i].find(":ids:") != std::string::npos) return "set";
  static const char* const kPerSlot[] = {"zset", "hash", "set"};
  // The period keys come last, three per period.
  const std::size_t from_end = keys.size() - i;  // 1..
  return kPerSlot[(3 - from_end % 3) % 3];
}

}  // namespace

BoardScripts::BoardScripts(std::string key_prefix, bool cold_tier)
    : prefix_(std::move(key_prefix)),
      cold_tier_(cold_tier),
      update_(embedded::hot_lua::update_lua),
      read_range_(embedded::hot_lua::read_range_lua),
      read_around_(embedded::hot_lua::read_around_lua),
      read_member_(embedded::hot_lua::read_member_lua),
      read_state_(embedded::hot_lua::read_state_lua),
      read_neighbours_(embedded::hot_lua::read_neighbours_lua),
      read_after_(embedded::hot_lua::read_after_lua),
      spill_mark_(embedded::hot_lua::spill_mark_lua),
      spill_take_(embedded::hot_lua::spill_take_lua),
      spill_remove_(embedded::hot_lua::spill_remove_lua),
      archive_freeze_(embedded::hot_lua::archive_freeze_lua),
      archive_release_(embedded::hot_lua::archive_release_lua),
      board_sync_(embedded::hot_lua::board_sync_lua),
      held_mark_(embedded::hot_lua::held_mark_lua),
      held_release_(embedded::hot_lua::held_release_lua),
      profile_cold_(embedded::hot_lua::profile_cold_lua) {}

PeriodKeys::PeriodKeys(const BoardKeys& board, std::string_view period, std::string_view period_id)
    : live(board.live(period, period_id)),
      meta(board.meta(period, period_id)),
      stale(board.stale(period, period_id)),
      synced(board.synced()) {}

// After a WRONGTYPE reply of a call: "; <key> holds a <type>, not a <type>" for each of the
// call's keys of another type than the script uses (one TYPE each, in one round trip: only
// when a call failed so). A transient failure of this look-up throws, as the call's would.
std::string BoardScripts::wrong_types(redis::Connection& conn, const std::vector<std::string>& keys,
                                      const std::string& error) {
  if (error.rfind("WRONGTYPE", 0) != 0) return "";
  std::vector<redis::Args> commands;
  commands.reserve(keys.size());
  for (const std::string& key : keys) commands.push_back({"TYPE", key});
  std::string out;
  const std::vector<redis::Reply> types = conn.pipeline(commands);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& type = types[i].checked().as_string();
    const std::string want = expected_type(keys, i);
    if (type != "none" && !want.empty() && type != want) {
      out += "; key " + keys[i] + " holds a " + type + ", not a " + want;
    }
  }
  return out;
}

namespace {

// The update script calls of one apply(). A batch whose call would pass
// redis::kMaxCommandArguments goes as several calls, halves in order: each sees what the one
// before it wrote. The first call of every batch goes in one pipeline (round), then the
// second ones, and so on.
struct CallPlan {
  std::vector<std::pair<redis::Args, redis::Args>> calls;
  std::vector<std::pair<std::size_t, std::size_t>> parts;  // per call: batch, its events
  std::vector<std::vector<std::size_t>> rounds;            // calls: the first of each batch...
};

// Adds batch i's calls (`part_no`: of this batch so far).
void add_calls(const std::string& prefix, bool cold_tier, std::size_t i, const HotBatch& b,
               std::size_t& part_no, CallPlan& plan) {
  protocol::Call c = protocol::marshal_update(prefix, b, cold_tier);
  if (3 + c.keys.size() + c.args.size() > redis::kMaxCommandArguments && b.events.size() > 1) {
    const auto half = static_cast<std::ptrdiff_t>(b.events.size() / 2);
    HotBatch first = b.without_events();
    first.events.assign(b.events.begin(), b.events.begin() + half);
    HotBatch second = b.without_events();
    second.events.assign(b.events.begin() + half, b.events.end());
    first.want_standings = second.want_standings = false;  // a call of one event's (b has more)
    add_calls(prefix, cold_tier, i, first, part_no, plan);
    add_calls(prefix, cold_tier, i, second, part_no, plan);
    return;
  }
  if (plan.rounds.size() <= part_no) plan.rounds.resize(part_no + 1);
  plan.rounds[part_no++].push_back(plan.calls.size());
  plan.calls.emplace_back(std::move(c.keys), std::move(c.args));
  plan.parts.emplace_back(i, b.events.size());
}

CallPlan plan_calls(const std::string& prefix, bool cold_tier,
                    const std::vector<HotBatch>& batches) {
  CallPlan plan;
  plan.calls.reserve(batches.size());
  for (std::size_t i = 0; i < batches.size(); ++i) {
    std::size_t part_no = 0;
    add_calls(prefix, cold_tier, i, batches[i], part_no, plan);
  }
  return plan;
}

}  // namespace

// A batch whose call failed for good sends no later call (its events fail with the same
// error), so that a member's later event in a later half cannot be applied while its
// earlier one failed.
std::vector<std::vector<HotResult>> BoardScripts::apply(
    redis::Connection& conn, const std::vector<HotBatch>& batches,
    const std::function<void()>& while_waiting) {
  CallPlan plan = plan_calls(prefix_, cold_tier_, batches);
  std::vector<std::vector<HotResult>> out(batches.size());
  std::vector<std::optional<std::string>> failed_with(batches.size());  // a lasting error
  if (plan.rounds.empty() && while_waiting) while_waiting();  // runs once, as a pipeline runs it
  for (std::size_t round = 0; round < plan.rounds.size(); ++round) {
    std::vector<std::size_t> sent;
    std::vector<std::pair<redis::Args, redis::Args>> round_calls;
    for (const std::size_t k : plan.rounds[round]) {
      if (failed_with[plan.parts[k].first]) continue;
      sent.push_back(k);
      round_calls.push_back(std::move(plan.calls[k]));  // each call goes in one round only
    }
    const std::vector<redis::Reply> replies =
        round_calls.empty()
            ? std::vector<redis::Reply>{}
            : update_.eval_pipelined(conn, round_calls,
                                     round == 0 ? while_waiting : std::function<void()>{});
    for (std::size_t j = 0; j < replies.size(); ++j) {
      const std::size_t k = sent[j];
      if (replies[j].is_error() &&
          redis::classify_reply_error(replies[j].str) == redis::ErrorClass::lasting) {
        // The update script reads every key it writes before its first write (ZMSCORE, HMGET,
        // SMISMEMBER, TYPE...), so a key of the wrong type fails the call before it wrote
        // anything.
        failed_with[plan.parts[k].first] =
            replies[j].str + wrong_types(conn, round_calls[j].first, replies[j].str);
        continue;
      }
      std::vector<HotResult> r =
          protocol::parse_update_replies(replies[j].checked(), plan.parts[k].second,
                                         protocol::with_standings(batches[plan.parts[k].first]));
      auto& into = out[plan.parts[k].first];
      into.insert(into.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
    }
  }
  fail_rest(batches, failed_with, out);
  return out;
}

// A batch that failed: its events after the ones that applied all fail with its error.
void BoardScripts::fail_rest(const std::vector<HotBatch>& batches,
                             const std::vector<std::optional<std::string>>& failed_with,
                             std::vector<std::vector<HotResult>>& out) {
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (!failed_with[i]) continue;
    HotResult failed;
    failed.outcome = HotOutcome::failed;
    failed.error = *failed_with[i];
    out[i].resize(batches[i].events.size(), failed);
  }
}

BoardScripts::HotRead<std::vector<Listed>> BoardScripts::range(redis::Connection& conn,
                                                               const PeriodKeys& keys,
                                                               std::int64_t offset,
                                                               std::int64_t count) {
  if (count <= 0) return {};
  const redis::Reply r = read_range_
                             .eval(conn, {keys.live, keys.meta, keys.synced},
                                   {std::to_string(offset), std::to_string(offset + count - 1),
                                    cold_tier_ ? "1" : "0"})
                             .checked();
  return read_protocol::parse_range(r, offset);
}

BoardScripts::HotRead<std::vector<Listed>> BoardScripts::around(redis::Connection& conn,
                                                                const PeriodKeys& keys,
                                                                const std::string& member,
                                                                std::int64_t k) {
  const redis::Reply r = read_around_
                             .eval(conn, {keys.live, keys.meta, keys.synced},
                                   {member, std::to_string(k), cold_tier_ ? "1" : "0"})
                             .checked();
  return read_protocol::parse_around(r);
}

BoardScripts::HotRead<std::optional<Listed>> BoardScripts::member(redis::Connection& conn,
                                                                  const PeriodKeys& keys,
                                                                  const std::string& member) {
  const redis::Reply r =
      read_member_.eval(conn, {keys.live, keys.meta, keys.synced}, {member, cold_tier_ ? "1" : "0"})
          .checked();
  return read_protocol::parse_member(r, member);
}

std::int64_t BoardScripts::size(redis::Connection& conn, const std::string& live_key) {
  return conn.command({"ZCARD", live_key}).as_int();
}

}  // namespace bk::hot

namespace bk::hot {
std::int64_t BoardScripts::count_better(redis::Connection& conn, const std::string& live_key,
                                        std::int64_t encoded) {
  return conn.command({"ZCOUNT", live_key, "-inf", "(" + std::to_string(encoded)}).as_int();
}

std::vector<std::int64_t> BoardScripts::count_better(redis::Connection& conn,
                                                     const std::string& live_key,
                                                     const std::vector<std::int64_t>& encoded) {
  std::vector<redis::Args> commands;
  commands.reserve(encoded.size());
  for (const std::int64_t e : encoded) {
    commands.push_back({"ZCOUNT", live_key, "-inf", "(" + std::to_string(e)});
  }
  std::vector<std::int64_t> out;
  out.reserve(encoded.size());
  for (const redis::Reply& r : conn.pipeline(commands)) out.push_back(r.as_int());
  return out;
}

std::vector<ScoredMember> BoardScripts::slice(redis::Connection& conn, const std::string& live_key,
                                              std::int64_t start, std::int64_t count) {
  if (count <= 0) return {};
  const redis::Reply r = conn.command({"ZRANGE", live_key, std::to_string(start),
                                       std::to_string(start + count - 1), "WITHSCORES"})
                             .checked();
  return read_protocol::parse_pairs(r, 0, r.elements.size() / 2);
}

ReadState BoardScripts::read_state(redis::Connection& conn, const PeriodKeys& keys,
                                   const std::string& member, std::int64_t head,
                                   const BoardKeys* profiles) {
  redis::Args call_keys{keys.live, keys.meta, keys.stale, keys.synced};
  const bool with_profiles = profiles != nullptr && head > 0;
  if (with_profiles) call_keys.insert(call_keys.end(), {profiles->names(), profiles->metadata()});
  const redis::Reply r =
      read_state_.eval(conn, call_keys, {member, cold_tier_ ? "1" : "0", std::to_string(head)})
          .checked();
  return read_protocol::parse_read_state(r, with_profiles);
}

Neighbours BoardScripts::neighbours(redis::Connection& conn, const PeriodKeys& keys,
                                    std::int64_t encoded, const std::string& member,
                                    std::int64_t k) {
  const redis::Reply r =
      read_neighbours_
          .eval(conn, {keys.live, keys.meta}, {std::to_string(encoded), member, std::to_string(k)})
          .checked();
  return read_protocol::parse_neighbours(r);
}

AfterKey BoardScripts::after(redis::Connection& conn, const PeriodKeys& keys, std::int64_t encoded,
                             const std::string& member, std::int64_t count,
                             const BoardKeys* profiles) {
  redis::Args call_keys{keys.live, keys.meta, keys.stale, keys.synced};
  if (profiles != nullptr)
    call_keys.insert(call_keys.end(), {profiles->names(), profiles->metadata()});
  const redis::Reply r =
      read_after_
          .eval(conn, call_keys,
                {std::to_string(encoded), member, std::to_string(count), cold_tier_ ? "1" : "0"})
          .checked();
  return read_protocol::parse_after(r, profiles != nullptr);
}

std::string BoardScripts::generation(redis::Connection& conn, const PeriodKeys& keys) {
  return read_protocol::parse_generation(
      conn.command({"HMGET", keys.meta, read_protocol::kSpillGeneration,
                    read_protocol::kRehydrateGeneration})
          .checked());
}

std::int64_t BoardScripts::mark_spilled(redis::Connection& conn, const PeriodKeys& keys,
                                        Instant expire_at) {
  return spill_mark_.eval(conn, {keys.meta, keys.live}, {std::to_string(to_epoch_ms(expire_at))})
      .as_int();
}

BoardScripts::SpillTake BoardScripts::take_for_spill(redis::Connection& conn,
                                                     const PeriodKeys& keys, std::int64_t start,
                                                     std::int64_t count, Instant expire_at) {
  const redis::Reply r = spill_take_
                             .eval(conn, {keys.live, keys.stale, keys.meta},
                                   {std::to_string(start), std::to_string(start + count - 1),
                                    std::to_string(to_epoch_ms(expire_at))})
                             .checked();
  SpillTake out;
  if (r.elements.empty()) return out;
  const redis::Reply& entries = r.at(0);
  out.members = read_protocol::parse_pairs(entries, 0, entries.elements.size() / 2);
  const std::string& flags = r.at(1).as_string();
  if (flags.size() != out.members.size()) {
    throw redis::ReplyError("spill_take returned " + std::to_string(flags.size()) + " flags for " +
                            std::to_string(out.members.size()) + " members");
  }
  out.maybe_cold.reserve(flags.size());
  for (const char f : flags) out.maybe_cold.push_back(f == '1');
  return out;
}

std::int64_t BoardScripts::remove_spilled(redis::Connection& conn, const PeriodKeys& keys,
                                          std::int64_t start,
                                          const std::vector<ScoredMember>& members) {
  // Several calls when one would pass redis::kMaxCommandArguments: each starts where the
  // members the calls before it left in place end; a held period stops it (the rest stay).
  constexpr std::size_t kPerCall = (redis::kMaxCommandArguments - 8) / 2;
  std::int64_t removed = 0;
  std::size_t from = 0;
  do {  // once at least: no members still checks whether the period is held
    const std::size_t to = std::min(members.size(), from + kPerCall);
    redis::Args args;
    args.reserve((to - from) * 2 + 1);
    args.push_back(std::to_string(start));
    for (std::size_t i = from; i < to; ++i) {
      args.push_back(members[i].member);
      args.push_back(std::to_string(members[i].encoded));
    }
    const std::int64_t r =
        spill_remove_.eval(conn, {keys.live, keys.stale, keys.meta, keys.synced}, args).as_int();
    if (r < 0) return from == 0 ? r : removed;
    removed += r;
    start += static_cast<std::int64_t>(to - from) - r;
    from = to;
  } while (from < members.size());
  return removed;
}

BoardScripts::Frozen BoardScripts::freeze(redis::Connection& conn, const PeriodKeys& keys,
                                          Instant expire_at) {
  const redis::Reply r =
      archive_freeze_.eval(conn, {keys.meta, keys.live}, {std::to_string(to_epoch_ms(expire_at))})
          .checked();
  return {r.at(0).as_int() == 1, r.at(1).as_int(), r.at(2).as_int() == 1};
}

std::vector<std::optional<std::int64_t>> BoardScripts::scores(
    redis::Connection& conn, const std::string& live_key, const std::vector<std::string>& members) {
  std::vector<std::optional<std::int64_t>> out;
  if (members.empty()) return out;
  // One ZMSCORE per redis::kMaxCommandArguments - 2 members, in one round trip.
  constexpr std::size_t kPerCommand = redis::kMaxCommandArguments - 2;
  std::vector<redis::Args> commands;
  for (std::size_t from = 0; from < members.size(); from += kPerCommand) {
    redis::Args args{"ZMSCORE", live_key};
    const std::size_t to = std::min(members.size(), from + kPerCommand);
    args.insert(args.end(), members.begin() + static_cast<std::ptrdiff_t>(from),
                members.begin() + static_cast<std::ptrdiff_t>(to));
    commands.push_back(std::move(args));
  }
  out.reserve(members.size());
  for (const redis::Reply& r : conn.pipeline(commands)) {
    for (const redis::Reply& e : r.checked().elements) {
      if (e.is_nil()) {
        out.emplace_back();
      } else {
        out.emplace_back(e.as_int());
      }
    }
  }
  return out;
}

void BoardScripts::release(redis::Connection& conn, const PeriodKeys& keys,
                           const std::string& registry_key, const std::string& registry_member) {
  archive_release_.eval(conn, {keys.live, keys.stale, keys.meta, registry_key}, {registry_member})
      .checked();
}

std::optional<std::int64_t> BoardScripts::sync(redis::Connection& conn, const BoardKeys& board,
                                               const std::vector<SyncedPeriod>& periods,
                                               const BoardBans& bans) {
  redis::Args keys{board.synced(), board.bans()};
  redis::Args args{bans.generation, std::to_string(bans.members.size())};
  args.insert(args.end(), bans.members.begin(), bans.members.end());
  for (const SyncedPeriod& p : periods) {
    keys.push_back(p.meta);
    args.push_back(std::to_string(to_epoch_ms(p.expire_at)));
  }
  const std::int64_t recovered = board_sync_.eval(conn, keys, args).checked().as_int();
  if (recovered < 0) return std::nullopt;
  return recovered;
}

namespace {

redis::Args flatten(const BoardScripts::Holds& holds) {
  redis::Args args;
  args.reserve(holds.size() * 2);
  for (const auto& [member, token] : holds) {
    args.push_back(member);
    args.push_back(token);
  }
  return args;
}

}  // namespace

void BoardScripts::hold(redis::Connection& conn, const BoardKeys& board, const Holds& holds) {
  if (holds.empty()) return;
  held_mark_.eval(conn, {board.held()}, flatten(holds)).checked();
}

void BoardScripts::release_holds(redis::Connection& conn, const BoardKeys& board,
                                 const Holds& holds) {
  if (holds.empty()) return;
  held_release_.eval(conn, {board.held()}, flatten(holds)).checked();
}

std::vector<std::size_t> BoardScripts::hot_nowhere(redis::Connection& conn, const std::string& hash,
                                                   const std::vector<std::string>& live,
                                                   const std::vector<std::string>& members) {
  if (members.empty()) return {};
  std::vector<std::string> keys{hash};
  keys.insert(keys.end(), live.begin(), live.end());
  const redis::Reply r = profile_cold_.eval(conn, keys, members).checked();
  std::vector<std::size_t> out;
  out.reserve(r.elements.size());
  for (const redis::Reply& i : r.elements) out.push_back(static_cast<std::size_t>(i.as_int() - 1));
  return out;
}

std::int64_t BoardScripts::drop_profiles(redis::Connection& conn, const std::string& hash,
                                         const Holds& moved) {
  if (moved.empty()) return 0;
  // The marker first: readers look in PostgreSQL for this field once it is set.
  conn.command({"HSET", hash, "", "1"}).checked();
  return held_release_.eval(conn, {hash}, flatten(moved)).checked().as_int();
}

}  // namespace bk::hot
