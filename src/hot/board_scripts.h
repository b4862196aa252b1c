// The board scripts: one stateless object (a key prefix) that runs the Lua scripts on any
// board's keys: apply batches of events atomically (one script call per board), read slices,
// ranks and neighbourhoods, spill, freeze, hold and sync. Scores stay encoded here; decoding
// is the caller's.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/period.h"
#include "core/policy.h"
#include "core/rank.h"
#include "core/score_codec.h"
#include "hot/keys.h"
#include "hot/read_protocol.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// One period of the board that a batch writes to.
struct PeriodSlot {
  std::string period_name;  // "daily", "cup", ...
  Period period;
  ScoreLayout layout;
  Instant expire_at;  // period end + retention
};

// What the update script knows of a member's cold-tier row for one slot, and the spill
// generation the look-up was made under (the script asks again if a spill moved on).
struct ColdValue {
  enum class State { unknown, absent, present };
  State state = State::unknown;
  std::int64_t encoded = 0;
  std::string gen;
};

struct HotEvent {
  std::string member;
  std::int64_t value = 0;
  Instant at;
  std::string event_id;            // empty: no idempotency
  std::vector<std::size_t> slots;  // indexes into HotBatch::slots
  std::vector<ColdValue> cold;     // parallel to slots; past its end: unknown
  // "" or the event's place in its stream: while an earlier event of the member is held
  // (waiting for the cold tier), an event with another token waits too. Several tokens
  // joined by protocol::kTokenSeparator: a coalesced event (see update.lua).
  std::string order_token;
};

// Everything of one update script call but its events.
struct HotCall {
  std::string board;
  Policy policy = Policy::increment;
  bool hold = false;              // see update.lua: hold spills while this batch looks up cold rows
  std::vector<PeriodSlot> slots;  // all share min/max/order/tie; spans may differ
  // Idempotency: event ids are remembered per board (not per period) for dedupe_window
  // after `now`, in time buckets (see hot/protocol.h).
  Millis dedupe_window{std::chrono::hours{24}};
  Instant now{};
  // Events with an order token are entries of this stream ("" for none): each one applied
  // leaves an in-flight marker on the board (<prefix>:{board}:inflight:<stream>), so that an
  // entry read again from a pending list is applied once however long it stayed pending.
  std::string stream;
  bool check_inflight = false;  // entries read again, or the call sent again: look them up
  // Every entry of the stream below this id's milliseconds is acknowledged: their markers
  // are dropped (0: nothing known).
  std::int64_t acknowledged_below_ms = 0;
  // false: applied events come back without their points (HotResult::points empty), which
  // the script builds and Redis sends a good deal faster (the stream consumer's case).
  bool want_points = true;
  // A call of one event (else ignored): its member's standing in every slot comes back with
  // it (HotResult::standings), read in the same atomic step (Leaderboards::write).
  bool want_standings = false;
  // A league board (core/league.h): a member's first applied event in a period seats it in
  // its division's filling cohort (update_league.lua). Not set: no league keys, no extra call.
  struct League {
    std::int64_t start = 0;  // the division of a member the divisions cache does not list
  };
  std::optional<League> league{};
};

struct HotBatch : HotCall {
  std::vector<HotEvent> events;

  // A copy of everything but the events (for a call that sends some of them again): the
  // slicing to HotCall is the point.
  HotBatch without_events() const {
    return HotBatch{HotCall(*this), {}};  // NOLINT(cppcoreguidelines-slicing)
  }
};

enum class HotOutcome {
  applied,
  duplicate,
  closed,
  out_of_range,
  needs_cold,
  blocked,
  expired,
  waiting,     // an earlier event of the member is held (see HotEvent::order_token)
  needs_sync,  // the board's periods must be synced from the cold tier first (sync())
  split,       // a coalesced event: nothing written, send its events one by one
  banned,      // the member is banned from the board (BoardKeys::bans): nothing written
  // The board's script call got a lasting error reply (redis::ErrorClass::lasting: a key of
  // the board holding another type, a script runtime error): not applied; HotResult::error
  // says why. Only that call's events: the other boards' calls keep their own results.
  failed,
};

// What the update script read of its event's member in one slot, right before and right
// after the event (HotCall::want_standings): Redis's part of its rank (update_standing.lua).
struct HotStanding {
  std::optional<std::int64_t> before;      // encoded: hot, or the cold score it was rehydrated from
  std::optional<std::int64_t> after;       // encoded, hot
  std::int64_t before_better = 0;          // hot members (others) scored strictly below `before`
  std::int64_t after_better = 0;           // ... below `after`
  bool spilled = false;                    // the cold tier may hold members of the period
  std::optional<std::int64_t> cold_bound;  // see ReadState::cold_bound
  std::string gen;                         // see ReadState::gen, after the event
  // Read only when a score lies beyond the hot part (spilled, not below cold_bound): the
  // members whose cold rows must be skipped (ReadState::hot_and_stale).
  std::optional<std::vector<std::string>> hot_and_stale{};
};

struct HotResult {
  HotOutcome outcome = HotOutcome::applied;
  std::vector<std::int64_t> points;     // applied: new points, parallel to the event's slots
                                        // (empty when the batch did not want them)
  std::vector<bool> rehydrated;         // applied: written from the cold value, per slot (slots
                                        // past its end were not)
  std::string period;                   // closed / out_of_range / expired: "<period>:<id>"
  std::int64_t refused_points = 0;      // out_of_range: the points it would have reached
  std::vector<std::size_t> cold_slots;  // needs_cold: slots to look up
  std::vector<std::string> cold_gens;   // needs_cold: their spill generations
  std::string error;  // failed: Redis's error reply, and the call's keys of a wrong type
  // With HotCall::want_standings: per slot of the call, whatever the outcome (empty when
  // nothing was written: needs_sync, failed).
  std::vector<HotStanding> standings{};
};

// The keys of one board period.
struct PeriodKeys {
  PeriodKeys(const BoardKeys& board, std::string_view period, std::string_view period_id);
  std::string live, meta, stale;
  std::string synced;  // the board's sync marker
};

// A period the cold tier has rows of, as sync() marks it.
struct SyncedPeriod {
  std::string meta;   // its :meta key
  Instant expire_at;  // period end + retention
};

// The board's bans as PostgreSQL holds them, and the bans generation read before the query.
struct BoardBans {
  std::string generation;            // "" when Redis had none
  std::vector<std::string> members;  // banned members
};

class BoardScripts {
 public:
  // `cold_tier`: the caller can consult the cold tier. Then nothing is taken on Redis's
  // word alone while a board is not synced (see sync()): updates answer needs_sync and
  // reads answer `spilled` (read both tiers).
  explicit BoardScripts(std::string key_prefix, bool cold_tier = false);

  // Applies each batch with one script call; batches are pipelined. Results per event.
  // `while_waiting` runs once while the calls are at the server (see Connection::pipeline).
  // A call whose reply is a lasting error (see redis::classify_reply_error) fails only its
  // own events (HotOutcome::failed); a transient one throws, as a broken connection does.
  std::vector<std::vector<HotResult>> apply(redis::Connection& conn,
                                            const std::vector<HotBatch>& batches,
                                            const std::function<void()>& while_waiting = {});

  // Reads answered by Redis alone: of a period that has not spilled, or of its hot part (hot
  // members scored below ReadState::cold_bound, listed before every cold member). `spilled`
  // (decided atomically with the rest) says the cold tier is needed, and then nothing was
  // read: the caller reads both tiers instead.
  template <class T>
  using HotRead = hot::HotRead<T>;
  // Entries at positions [offset, offset + count) in listing order, with ranks.
  HotRead<std::vector<Listed>> range(redis::Connection& conn, const PeriodKeys& keys,
                                     std::int64_t offset, std::int64_t count);
  // The member and up to k neighbours each side; empty when the member is not hot.
  HotRead<std::vector<Listed>> around(redis::Connection& conn, const PeriodKeys& keys,
                                      const std::string& member, std::int64_t k);
  // The member's rank and score; nullopt when not hot.
  HotRead<std::optional<Listed>> member(redis::Connection& conn, const PeriodKeys& keys,
                                        const std::string& member);
  std::int64_t size(redis::Connection& conn, const std::string& live_key);
  // The hot scores of these members (nullopt: not hot), one round trip.
  std::vector<std::optional<std::int64_t>> scores(redis::Connection& conn,
                                                  const std::string& live_key,
                                                  const std::vector<std::string>& members);
  // Hot members with encoded < e.
  std::int64_t count_better(redis::Connection& conn, const std::string& live_key,
                            std::int64_t encoded);
  // The same for many scores, one round trip (result i for encoded[i]).
  std::vector<std::int64_t> count_better(redis::Connection& conn, const std::string& live_key,
                                         const std::vector<std::int64_t>& encoded);
  // Positions [start, start + count) without ranks.
  std::vector<ScoredMember> slice(redis::Connection& conn, const std::string& live_key,
                                  std::int64_t start, std::int64_t count);
  // `head`: also the first `head` hot members in listing order (with `profiles`, the
  // board's keys: their profiles too).
  ReadState read_state(redis::Connection& conn, const PeriodKeys& keys, const std::string& member,
                       std::int64_t head = 0, const BoardKeys* profiles = nullptr);
  Neighbours neighbours(redis::Connection& conn, const PeriodKeys& keys, std::int64_t encoded,
                        const std::string& member, std::int64_t k);
  // Up to `count` hot members listed strictly after (encoded, member), and where that key
  // sits among the hot members, in one script call (the next page of a cursor); with
  // `profiles` (the board's keys), their profiles too.
  AfterKey after(redis::Connection& conn, const PeriodKeys& keys, std::int64_t encoded,
                 const std::string& member, std::int64_t count,
                 const BoardKeys* profiles = nullptr);
  // The period's "<spill gen>:<rehydrate gen>" (ReadState::gen): a merged read that finds it
  // moved read while a spill or a rehydration changed the tiers.
  std::string generation(redis::Connection& conn, const PeriodKeys& keys);

  // Spill (protocol 2). mark_spilled returns the live key's size, or -1 when the period
  // is closed (a spill never moves members under an archive).
  std::int64_t mark_spilled(redis::Connection& conn, const PeriodKeys& keys, Instant expire_at);
  // Members at positions [start, start + count), entered in the stale set first.
  // maybe_cold[i] is false when member i cannot have a cold row (it was not in the stale
  // set), so its row may be inserted without a conflict check.
  struct SpillTake {
    std::vector<ScoredMember> members;
    std::vector<bool> maybe_cold;
  };
  SpillTake take_for_spill(redis::Connection& conn, const PeriodKeys& keys, std::int64_t start,
                           std::int64_t count, Instant expire_at);
  // Archive (protocol 3). freeze closes the period for writes.
  struct Frozen {
    bool exists = false;     // the live key exists (else: expired, never made, or lost)
    std::int64_t size = 0;   // its members
    bool recovered = false;  // Redis had lost the period's data once (see sync())
  };
  Frozen freeze(redis::Connection& conn, const PeriodKeys& keys, Instant expire_at);
  // Frees the hot keys and removes the registry entry (after the archive committed).
  void release(redis::Connection& conn, const PeriodKeys& keys, const std::string& registry_key,
               const std::string& registry_member);

  // Removes those whose score is unchanged; returns how many, or -1 when a writer holds
  // the period (nothing removed).
  std::int64_t remove_spilled(redis::Connection& conn, const PeriodKeys& keys, std::int64_t start,
                              const std::vector<ScoredMember>& members);

  // Safety net: marks the periods that have cold rows as spilled (and as recovered where
  // Redis had forgotten), rebuilds the board's bans hash from `bans`, then sets the board's
  // sync marker. Returns how many periods were recovered; nullopt, having written nothing,
  // when the bans generation is no longer `bans.generation` (a ban or unban ran since it
  // was read, hot::Moderation::bans_generation): sync again.
  std::optional<std::int64_t> sync(redis::Connection& conn, const BoardKeys& board,
                                   const std::vector<SyncedPeriod>& periods, const BoardBans& bans);
  // Order across outages: holds members whose event (token) waits for the cold tier, and
  // releases holds of events resolved without the update script. Pairs (member, token).
  using Holds = std::vector<std::pair<std::string, std::string>>;
  void hold(redis::Connection& conn, const BoardKeys& board, const Holds& holds);
  void release_holds(redis::Connection& conn, const BoardKeys& board, const Holds& holds);

  // Member profiles (tick). The indexes of `members` that are in none of `live` (the
  // board's live ZSETs); then, after their profiles are in PostgreSQL, drops each pair
  // (member, value) from `hash` (board.names() or board.metadata()) whose value is unchanged,
  // setting that hash's marker first. Returns how many fields went.
  std::vector<std::size_t> hot_nowhere(redis::Connection& conn, const std::string& hash,
                                       const std::vector<std::string>& live,
                                       const std::vector<std::string>& members);
  std::int64_t drop_profiles(redis::Connection& conn, const std::string& hash, const Holds& moved);

  const std::string& key_prefix() const { return prefix_; }

 private:
  static std::string wrong_types(redis::Connection& conn, const std::vector<std::string>& keys,
                                 const std::string& error);
  static void fail_rest(const std::vector<HotBatch>& batches,
                        const std::vector<std::optional<std::string>>& failed_with,
                        std::vector<std::vector<HotResult>>& out);

  std::string prefix_;
  bool cold_tier_ = false;
  redis::Script update_;
  redis::Script read_range_;
  redis::Script read_around_;
  redis::Script read_member_;
  redis::Script read_state_;
  redis::Script read_neighbours_;
  redis::Script read_after_;
  redis::Script spill_mark_;
  redis::Script spill_take_;
  redis::Script spill_remove_;
  redis::Script archive_freeze_;
  redis::Script archive_release_;
  redis::Script board_sync_;
  redis::Script held_mark_;
  redis::Script held_release_;
  redis::Script profile_cold_;
};

}  // namespace bk::hot
