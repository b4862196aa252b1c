// Moderation against a model, with real Redis and PostgreSQL: seeded random interleavings of
// events (one by one and batched), spills, rehydrations, removals, bans and erasures, compared
// after every step, read as the library reads (PostgreSQL's counted path) and as serve does
// with cold ranks from memory (service/cold_index.h); remove and ban of a member in each state it
// can be in (hot, spilled, rehydrated, archived while the removal runs); and a ban racing the
// stream consumer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/keys.h"
#include "lifecycle/ingest.h"
#include "lifecycle/tick.h"
#include "moderation_model.h"
#include "service/cold_index.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;
using service::Leaderboards;
using service::Refusal;
using service::Update;
using service::UpdateResult;
using service::UpdateStatus;
using test::BoardModel;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// Two boards, two periods each, a tiny hot buffer: three members stay hot per period, the
// others go cold at every spill and come back when they score again.
const char* kBoards = R"(  - name: pa
    periods: [daily, weekly]
    max_points: 10000000
    hot_keep: 3
    display: 2
    retention: {default: 3650d}
  - name: pb
    periods: [daily, weekly]
    max_points: 10000000
    hot_keep: 3
    display: 2
    retention: {default: 3650d}
)";

// The members the steps pick from (one with a colon and a space, one not ASCII).
const std::vector<std::string> kMembers{"m0",
                                        "m1",
                                        "m2",
                                        "m3",
                                        "m4",
                                        "m5",
                                        "m:6 x",
                                        "m\xc3\xbc"
                                        "7"};
const std::vector<std::string> kBoardNames{"pa", "pb"};

bool refused_as_banned(const UpdateResult& r) {
  return r.status == UpdateStatus::refused && r.refusal == Refusal::banned &&
         r.reason.find("banned") != std::string::npos;
}

// One seed's run: its own prefix (keys and schema), a library for events and reads, another
// (its own connections, as another process) for moderation, and the model.
class ModelRun {
 public:
  explicit ModelRun(unsigned seed) : rng_(seed) {
    cold_.migrate();
    memory_.share_cold_ranks(cold_ranks_);
    for (const std::string& b : kBoardNames) {
      model_[b].periods["daily"];
      model_[b].periods["weekly"];
    }
  }

  // One random step; `what` says what it did (for the trace of a failure).
  void step(int n, std::string& what) {
    next_at_ = base_ + std::chrono::seconds{20 * n};
    const auto pick = rng_() % 100;
    if (pick < 34) return single_event(what);
    if (pick < 54) return batch(what);
    if (pick < 62) return spill(what);
    if (pick < 70) return removal_racing_a_spill(what);
    if (pick < 78) return remove_one_period(what);
    if (pick < 85) return remove_everywhere(what);
    if (pick < 93) return ban(what);
    if (pick < 97) return unban(what);
    return erase(what);
  }

  // The run reached every case: members went cold, came back, were removed, were refused.
  void expect_every_case(unsigned seed) {
    std::cout << "[ seed ] " << seed << ": spilled " << spilled_ << ", rehydrated "
              << lb_.counters().rehydrated << ", removals that found the member " << removals_found_
              << ", bans " << bans_ << ", events of banned members " << refused_ << ", erasures "
              << erased_ << ", cold reads from memory " << cold_ranks_->stats().hits << std::endl;
    EXPECT_GT(spilled_, 0);
    EXPECT_GT(lb_.counters().rehydrated, 0);
    EXPECT_GT(removals_found_, 0);
    EXPECT_GT(bans_, 0);
    EXPECT_GT(refused_, 0);
    EXPECT_GT(erased_, 0);
    EXPECT_GT(cold_ranks_->stats().hits, 0) << "reads answered from memory";
  }

  // Every board against the model: listings, counts, ranks, periods(), bans, and a banned
  // member's event refused.
  void check() {
    for (const std::string& b : kBoardNames) {
      test::expect_board(lb_, b, model_[b], kMembers);
      for (const auto& [period, members] : model_[b].periods) {
        memory_.load_cold_ranks(memory_.resolve(b, period, std::nullopt));
      }
      SCOPED_TRACE("cold ranks from memory");
      test::expect_board(memory_, b, model_[b], kMembers);
      std::set<std::string> listed;
      for (const auto& record : admin_.moderation().bans(b)) {
        EXPECT_EQ(record.board, b);
        listed.insert(record.member);
      }
      EXPECT_EQ(listed, model_[b].banned) << "bans of " << b;
      for (const std::string& m : model_[b].banned) {
        // Would change the listing if applied: the next check would see it too.
        const UpdateResult r = lb_.apply(Update{b, m, 1000, next_at_, ""});
        ++refused_;
        EXPECT_TRUE(refused_as_banned(r)) << "an event of banned " << m << " on " << b
                                          << ": status " << static_cast<int>(r.status) << " "
                                          << service::refusal_label(r.refusal) << " " << r.reason;
      }
    }
  }

 private:
  std::string prefix_ = test::unique_prefix();
  Config config_ = test::make_config(prefix_, kBoards);
  redis::Connection conn_ = test::connect_redis();
  cold::ColdStore cold_{test::postgres_url(), prefix_};
  cold::History archive_{test::postgres_url(), prefix_};
  const Instant now_ = at("2026-11-22T12:00:00Z");
  const Instant base_ = at("2026-11-22T01:00:00Z");
  Leaderboards lb_{config_, conn_, Clock(now_), &cold_};
  redis::Connection admin_conn_ = test::connect_redis();
  cold::ColdStore admin_cold_{test::postgres_url(), prefix_};
  Leaderboards admin_{config_, admin_conn_, Clock(now_), &admin_cold_};
  // Reads as serve's (another process): cold ranks from memory, loaded before each check.
  redis::Connection memory_conn_ = test::connect_redis();
  cold::ColdStore memory_cold_{test::postgres_url(), prefix_};
  Leaderboards memory_{config_, memory_conn_, Clock(now_), &memory_cold_};
  std::shared_ptr<service::ColdIndexes> cold_ranks_ =
      std::make_shared<service::ColdIndexes>(std::size_t{1} << 24);
  std::mt19937 rng_;
  std::map<std::string, BoardModel> model_;
  Instant next_at_;
  // What happened over the run, so that a run that never reached a case says so.
  std::int64_t spilled_ = 0;
  std::int64_t removals_found_ = 0;
  std::int64_t refused_ = 0;  // events of banned members tried (each must be refused)
  std::int64_t bans_ = 0;
  std::int64_t erased_ = 0;

  const std::string& any(const std::vector<std::string>& from) {
    return from[rng_() % from.size()];
  }

  Update event(std::int64_t i) {
    return Update{any(kBoardNames), any(kMembers), static_cast<std::int64_t>(1 + rng_() % 40),
                  next_at_ + std::chrono::milliseconds{1000 * i}, ""};
  }

  // Applied to the model unless banned: then it must be refused so.
  void expect_result(const Update& u, const UpdateResult& r) {
    BoardModel& board = model_[u.board];
    if (board.banned.count(u.member) != 0) {
      EXPECT_TRUE(refused_as_banned(r))
          << "event of banned " << u.member << " on " << u.board << ": status "
          << static_cast<int>(r.status) << " " << r.reason;
      return;
    }
    EXPECT_EQ(r.status, UpdateStatus::applied) << u.member << " on " << u.board << ": " << r.reason;
    board.applied(u.member, u.value, *u.at);
  }

  void single_event(std::string& what) {
    const Update u = event(0);
    what = "event " + u.board + " " + u.member + " +" + std::to_string(u.value);
    expect_result(u, lb_.apply(u));
  }

  void batch(std::string& what) {
    std::vector<Update> updates;
    const std::int64_t n = 2 + rng_() % 7;
    what = "batch of " + std::to_string(n) + ":";
    for (std::int64_t i = 0; i < n; ++i) {
      updates.push_back(event(i));
      what += " " + updates.back().board + "/" + updates.back().member + "+" +
              std::to_string(updates.back().value);
    }
    const auto results = lb_.apply(updates);
    ASSERT_EQ(results.size(), updates.size());
    for (std::size_t i = 0; i < updates.size(); ++i) expect_result(updates[i], results[i]);
  }

  void spill(std::string& what) {
    what = "tick (spill)";
    const auto report = lifecycle::Tick(config_, conn_, cold_, archive_, Clock(now_)).run({});
    for (const auto& b : report.boards) {
      EXPECT_TRUE(b.error.empty()) << b.board << ": " << b.error;
      for (const auto& p : b.periods) spilled_ += p.spilled;
    }
  }

  // What remove() said against what the model held before it.
  void expect_removal(const service::Removal& r, const BoardModel& before,
                      const std::string& member, const std::optional<std::string>& period) {
    bool held = false;
    for (const auto& [name, members] : before.periods) {
      if (!period || *period == name) held = held || members.count(member) != 0;
    }
    EXPECT_EQ(r.found(), held) << "found() of the removal of " << member;
    removals_found_ += held ? 1 : 0;
    for (const service::PeriodRemoval& p : r.periods) {
      if (period) {
        EXPECT_EQ(p.period, *period);
      }
      const auto it = before.periods.find(p.period);
      ASSERT_NE(it, before.periods.end()) << "removal names period " << p.period;
      EXPECT_EQ(p.total() > 0, it->second.count(member) != 0)
          << "removal of " << member << " from " << p.period << " " << p.period_id << ": hot "
          << p.hot << " cold " << p.cold << " history " << p.history;
    }
  }

  void remove_one_period(std::string& what) {
    const std::string& b = any(kBoardNames);
    const std::string& m = any(kMembers);
    const std::string period = rng_() % 2 == 0 ? "daily" : "weekly";
    what = "remove " + b + " " + m + " --period " + period;
    const BoardModel before = model_[b];
    expect_removal(admin_.moderation().remove(b, m, period), before, m, period);
    model_[b].removed(m, period);
  }

  // The right to erasure: the member leaves every board, and its bans go with it.
  void erase(std::string& what) {
    const std::string& m = any(kMembers);
    what = "erase " + m;
    admin_.moderation().erase(m);
    for (const std::string& b : kBoardNames) {
      model_[b].removed(m);
      model_[b].banned.erase(m);
    }
    ++erased_;
  }

  void remove_everywhere(std::string& what) {
    const std::string& b = any(kBoardNames);
    const std::string& m = any(kMembers);
    what = "remove " + b + " " + m;
    const BoardModel before = model_[b];
    expect_removal(admin_.moderation().remove(b, m), before, m, std::nullopt);
    model_[b].removed(m);
  }

  // A tick on its own connections (another process) spills while the removal or ban runs:
  // whichever way they interleave, the member is gone and the spill changed no listing.
  void removal_racing_a_spill(std::string& what) {
    const std::string& b = any(kBoardNames);
    const std::string& m = any(kMembers);
    const bool banning = rng_() % 2 == 0;
    what = std::string(banning ? "ban " : "remove ") + b + " " + m + " racing a spill";
    const BoardModel before = model_[b];
    std::string error;
    std::thread spiller([&] {
      try {
        redis::Connection c = test::connect_redis();
        cold::ColdStore store(test::postgres_url(), prefix_);
        cold::History history(test::postgres_url(), prefix_);
        const auto report = lifecycle::Tick(config_, c, store, history, Clock(now_)).run({});
        for (const auto& board : report.boards) error += board.error;
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    service::Removal removal;
    if (banning) {
      const service::BanResult r = admin_.moderation().ban(b, m, "racing");
      EXPECT_EQ(r.newly_banned, before.banned.count(m) == 0) << "newly_banned of " << m;
      removal = r.removed;
    } else {
      removal = admin_.moderation().remove(b, m);
    }
    spiller.join();
    EXPECT_TRUE(error.empty()) << "the racing tick: " << error;
    expect_removal(removal, before, m, std::nullopt);
    model_[b].removed(m);
    if (banning) {
      model_[b].banned.insert(m);
      ++bans_;
    }
  }

  void ban(std::string& what) {
    const std::string& b = any(kBoardNames);
    const std::string& m = any(kMembers);
    what = "ban " + b + " " + m;
    BoardModel& board = model_[b];
    const service::BanResult r = admin_.moderation().ban(b, m, "reason " + std::to_string(rng_()));
    EXPECT_EQ(r.newly_banned, board.banned.count(m) == 0) << "newly_banned of " << m;
    EXPECT_EQ(r.removed.found(), board.listed(m)) << "found() of the ban of " << m;
    removals_found_ += board.listed(m) ? 1 : 0;
    board.removed(m);
    board.banned.insert(m);
    ++bans_;
  }

  void unban(std::string& what) {
    const std::string& b = any(kBoardNames);
    // Mostly a banned member, when there is one.
    BoardModel& board = model_[b];
    const std::string m =
        !board.banned.empty() && rng_() % 4 != 0
            ? *std::next(board.banned.begin(), static_cast<long>(rng_() % board.banned.size()))
            : any(kMembers);
    what = "unban " + b + " " + m;
    EXPECT_EQ(admin_.moderation().unban(b, m), board.banned.count(m) != 0) << "unban of " << m;
    board.banned.erase(m);
  }
};

// Seeds run one after another, each on its own prefix; the seed and the step of a failure
// are in its trace. Bounded by count: kSteps steps per seed.
TEST(ModerationModelTest, RandomEventsSpillsRemovalsAndBansMatchTheModelAfterEveryStep) {
  constexpr int kSteps = 120;
  for (const unsigned seed : {1U, 2U, 3U, 29U, 4242U}) {
    std::cout << "[ seed ] " << seed << std::endl;
    ModelRun run(seed);
    for (int n = 0; n < kSteps; ++n) {
      std::string what;
      SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(n));
      run.step(n, what);
      SCOPED_TRACE(what);
      run.check();
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) {
        std::cout << "[ fail ] seed " << seed << " step " << n << ": " << what << std::endl;
        return;
      }
    }
    run.expect_every_case(seed);
    if (::testing::Test::HasFailure()) return;
  }
}

// ---- The matrix: remove and ban of a member in each state it can be in. ----

const char* kMatrixBoards = R"(  - name: mx
    periods: [daily]
    max_points: 10000000
    hot_keep: 2
    display: 1
    retention: {default: 3650d}
)";

enum class Op { remove, ban };
// hot: never spilled; hot_spilled: hot in a spilled period; cold: spilled; rehydrated: hot
// again with its (stale) cold row still in PostgreSQL.
enum class State { hot, hot_spilled, cold, rehydrated };

const char* name_of(Op op) {
  return op == Op::remove ? "Remove" : "Ban";
}
const char* name_of(State s) {
  switch (s) {
    case State::hot:
      return "Hot";
    case State::hot_spilled:
      return "HotInASpilledPeriod";
    case State::cold:
      return "Spilled";
    case State::rehydrated:
      return "Rehydrated";
  }
  return "?";
}

// For gtest's messages ("GetParam() = (Ban, Spilled)").
void PrintTo(Op op, std::ostream* out) {
  *out << name_of(op);
}
void PrintTo(State state, std::ostream* out) {
  *out << name_of(state);
}

class ModerationMatrix {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kMatrixBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  const Instant now = at("2026-11-22T12:00:00Z");
  const Instant late = at("2026-11-24T00:00:00Z");  // the 22nd is past end + grace
  const cold::PeriodKey day{"mx", "daily", "2026-11-22"};
  Leaderboards lb{config, conn, Clock(now), &cold};
  redis::Connection admin_conn = test::connect_redis();
  cold::ColdStore admin_cold{test::postgres_url(), prefix};
  Leaderboards admin{config, admin_conn, Clock(now), &admin_cold};
  BoardModel model;
  Instant next = at("2026-11-22T01:00:00Z");

  void set_up() {
    cold.migrate();
    model.periods["daily"];
    // a 50, b 40, c 30, d 20, e 10: with hot_keep 2 a spill leaves a and b hot.
    std::int64_t points = 50;
    for (const char* m : {"a", "b", "c", "d", "e"}) add(m, points), points -= 10;
  }

  void add(const std::string& member, std::int64_t value) {
    next += 1s;
    const UpdateResult r = lb.apply(Update{"mx", member, value, next, ""});
    ASSERT_EQ(r.status, UpdateStatus::applied) << member << ": " << r.reason;
    model.applied(member, value, next);
  }

  void spill() {
    const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
    for (const auto& b : report.boards) ASSERT_TRUE(b.error.empty()) << b.error;
  }

  bool hot(const std::string& member) {
    return !conn.command(
                    {"ZSCORE", hot::BoardKeys(prefix, "mx").live("daily", "2026-11-22"), member})
                .checked()
                .is_nil();
  }
  std::int64_t cold_rows(const std::string& member) {
    return std::stoll(test::psql("SELECT count(*) FROM " + prefix +
                                 ".cold_members WHERE board = 'mx' AND member = '" + member + "'"));
  }

  void expect_board() { test::expect_board(lb, "mx", model, {"a", "b", "c", "d", "e"}); }

  // The archive of the 22nd, by a tick at `late`, equals the model (ranks and positions
  // recomputed: nothing was removed after it).
  void expect_archive_equals_model() {
    const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(late)).run({});
    for (const auto& b : report.boards) ASSERT_TRUE(b.error.empty()) << b.error;
    ASSERT_EQ(archive.status(day), cold::PeriodStatus::archived);
    const auto want = test::brute_force(model.periods.at("daily"));
    const auto got = archive.history(day, 1000);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const service::Standing g{got[i].rank, got[i].member, got[i].points, got[i].achieved_at};
      EXPECT_TRUE(test::same(g, want[i])) << "history position " << i;
      EXPECT_EQ(got[i].position, static_cast<std::int64_t>(i + 1));
    }
  }
};

class ModerationMatrixTest : public ModerationMatrix,
                             public ::testing::TestWithParam<std::tuple<Op, State>> {
 protected:
  void SetUp() override { set_up(); }

  // Puts the target in its state; returns it.
  std::string arrange(State state) {
    if (state == State::hot) {
      EXPECT_TRUE(hot("b"));
      return "b";
    }
    spill();
    if (state == State::hot_spilled) {
      EXPECT_TRUE(hot("b"));
      EXPECT_EQ(cold_rows("b"), 0);
      return "b";
    }
    EXPECT_FALSE(hot("d"));
    EXPECT_EQ(cold_rows("d"), 1);
    if (state == State::rehydrated) {
      add("d", 100);  // 120: hot again, ranked first, its cold row (20) stale
      EXPECT_TRUE(hot("d"));
      EXPECT_EQ(cold_rows("d"), 1);
    }
    return "d";
  }
};

// After remove or ban: not listed, ranks below move up, counts drop, no cold row left, a
// spill brings nothing back, a later event starts it from zero (remove) or is refused (ban),
// and the archive holds exactly the model.
TEST_P(ModerationMatrixTest, TheMemberIsGoneFromEveryReadTheNextSpillAndTheArchive) {
  const auto [op, state] = GetParam();
  const std::string target = arrange(state);
  ASSERT_FALSE(HasFailure()) << "the target is not in the state the case names";
  expect_board();
  service::Removal removal;
  if (op == Op::remove) {
    removal = admin.moderation().remove("mx", target);
  } else {
    const service::BanResult r = admin.moderation().ban("mx", target, "matrix");
    EXPECT_TRUE(r.newly_banned);
    removal = r.removed;
  }
  model.removed(target);
  EXPECT_TRUE(removal.found());
  ASSERT_EQ(removal.periods.size(), 1U);
  const service::PeriodRemoval& p = removal.periods[0];
  EXPECT_EQ(p.board, "mx");
  EXPECT_EQ(p.period, "daily");
  EXPECT_EQ(p.period_id, "2026-11-22");
  EXPECT_FALSE(p.archived);
  EXPECT_EQ(p.hot, state == State::cold ? 0 : 1);
  EXPECT_EQ(p.cold, state == State::cold || state == State::rehydrated ? 1 : 0);
  EXPECT_EQ(p.history, 0);
  EXPECT_FALSE(hot(target));
  EXPECT_EQ(cold_rows(target), 0);
  expect_board();

  // Idempotent: nothing more to remove.
  EXPECT_FALSE(admin.moderation().remove("mx", target).found());
  spill();
  expect_board();

  const UpdateResult again = lb.apply(Update{"mx", target, 7, next + 1s, ""});
  if (op == Op::remove) {
    EXPECT_EQ(again.status, UpdateStatus::applied) << again.reason;
    model.applied(target, 7, next + 1s);  // from zero: 7 points
  } else {
    EXPECT_TRUE(refused_as_banned(again)) << again.reason;
  }
  next += 1s;
  add("e", 1);  // another cold member comes back meanwhile
  expect_board();
  spill();
  expect_board();
  expect_archive_equals_model();
}

INSTANTIATE_TEST_SUITE_P(Cases, ModerationMatrixTest,
                         ::testing::Combine(::testing::Values(Op::remove, Op::ban),
                                            ::testing::Values(State::hot, State::hot_spilled,
                                                              State::cold, State::rehydrated)),
                         [](const ::testing::TestParamInfo<std::tuple<Op, State>>& param) {
                           return std::string(name_of(std::get<0>(param.param))) +
                                  name_of(std::get<1>(param.param));
                         });

// ---- Remove and ban racing the archive of the period. ----

class ModerationArchiveRaceTest : public ModerationMatrix, public ::testing::Test {
 protected:
  void SetUp() override { set_up(); }

  // The archive of the 22nd as archived with every member, less `gone`, each row with the
  // rank and position it was archived with.
  void expect_history_without(const std::set<std::string>& gone) {
    ASSERT_EQ(archive.status(day), cold::PeriodStatus::archived);
    const auto full = test::brute_force(model.periods.at("daily"));
    std::vector<service::Standing> want;
    std::vector<std::int64_t> positions;
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (gone.count(full[i].member) != 0) continue;
      want.push_back(full[i]);
      positions.push_back(static_cast<std::int64_t>(i + 1));
    }
    const auto got = archive.history(day, 1000);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const service::Standing g{got[i].rank, got[i].member, got[i].points, got[i].achieved_at};
      EXPECT_TRUE(test::same(g, want[i])) << "history row " << i;
      EXPECT_EQ(got[i].position, positions[i]) << got[i].member;
    }
    const auto info = archive.archived_period(day);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->members, static_cast<std::int64_t>(want.size()));
  }

  static void expect_history_removed(const service::Removal& r, const std::string& what) {
    EXPECT_TRUE(r.found()) << what;
    std::int64_t history = 0;
    for (const auto& p : r.periods) {
      if (p.period_id != "2026-11-22") continue;
      EXPECT_TRUE(p.archived) << what;
      history += p.history;
    }
    EXPECT_EQ(history, 1) << what << ": its archived row";
  }
};

// The archive's transaction commits first; the removals (of b, hot; of e, rehydrated) and the
// ban (of d, spilled) run before the tick frees the period's keys: they take the archived
// rows out.
TEST_F(ModerationArchiveRaceTest, ARemovalAfterTheArchiveCommittedTakesItsRowsOutOfHistory) {
  spill();
  add("e", 100);  // 110: hot again, its cold row (10) stale
  ASSERT_TRUE(hot("e"));
  ASSERT_EQ(cold_rows("e"), 1);
  std::optional<service::Removal> removed_b, removed_e;
  std::optional<service::BanResult> banned_d;
  std::string error;
  lifecycle::TickOptions options;
  options.archive_progress = [&](const lifecycle::ArchiveProgress& p) {
    if (!p.done || removed_b) return;
    try {  // the tick swallows what a progress display throws
      removed_b = admin.moderation().remove("mx", "b");
      banned_d = admin.moderation().ban("mx", "d", "archive race");
      removed_e = admin.moderation().remove("mx", "e");
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(late)).run(options);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(removed_b && banned_d && removed_e) << "the archive never reported its end";
  for (const auto& b : report.boards) EXPECT_TRUE(b.error.empty()) << b.error;
  expect_history_removed(*removed_b, "remove b");
  EXPECT_TRUE(banned_d->newly_banned);
  expect_history_removed(banned_d->removed, "ban d");
  expect_history_removed(*removed_e, "remove e");
  expect_history_without({"b", "d", "e"});
  EXPECT_EQ(cold_rows("d") + cold_rows("e"), 0);
  // Banned: refused in the next period too.
  Leaderboards later(config, conn, Clock(late), &cold);
  EXPECT_TRUE(refused_as_banned(later.apply(Update{"mx", "d", 5, late - 1h, ""})));
}

// The removal starts while the archive's transaction is open (merging): it waits for the
// period's lock, then finds the period archived and takes its row out.
TEST_F(ModerationArchiveRaceTest, ARemovalWaitingForTheArchivesLockTakesItsRowOutOfHistory) {
  spill();
  std::optional<service::Removal> removed_b;
  std::string error;
  std::atomic<bool> finished{false};
  std::thread remover;
  lifecycle::TickOptions options;
  options.archive_progress = [&](const lifecycle::ArchiveProgress& p) {
    if (!p.merging || p.done || remover.joinable()) return;
    remover = std::thread([&] {
      try {
        removed_b = admin.moderation().remove("mx", "b");
      } catch (const std::exception& e) {
        error = e.what();
      }
      finished = true;
    });
    // Until its Redis step took b out of the hot key (or it ended): it has seen the period.
    for (int i = 0; i < 3000 && hot("b") && !finished.load(); ++i)
      std::this_thread::sleep_for(10ms);
  };
  const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(late)).run(options);
  ASSERT_TRUE(remover.joinable()) << "the archive never merged";
  remover.join();
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(removed_b);
  for (const auto& b : report.boards) EXPECT_TRUE(b.error.empty()) << b.error;
  expect_history_removed(*removed_b, "remove b");
  expect_history_without({"b"});
}

// ---- A ban racing the stream consumer. ----

const char* kStreamBoards = R"(  - name: st
    periods: [daily]
    max_points: 10000000
    hot_keep: 100000
    display: 10
    retention: {default: 3650d}
)";

// A stream entry's fields by name.
std::map<std::string, std::string> fields_of(const redis::Reply& fields) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    const redis::Reply& v = fields.at(i + 1);  // strings; XINFO has integers and arrays too
    out[fields.at(i).as_string()] = v.type == redis::Reply::Type::string ? v.str : "";
  }
  return out;
}

// "1700000000000-3" < "1700000000000-12": stream ids compared as numbers.
std::pair<std::int64_t, std::int64_t> id_of(const std::string& id) {
  const auto dash = id.find('-');
  return {std::stoll(id.substr(0, dash)), std::stoll(id.substr(dash + 1))};
}

bool consumed(redis::Connection& conn, const std::string& stream) {
  const redis::Reply groups = conn.command({"XINFO", "GROUPS", stream});
  if (groups.is_error() || groups.elements.empty()) return false;
  const auto f = groups.at(0);
  std::int64_t lag = -1, pending = -1;
  for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
    const std::string name = f.at(i).as_string();
    if (name == "lag") lag = f.at(i + 1).is_nil() ? -1 : f.at(i + 1).as_int();
    if (name == "pending") pending = f.at(i + 1).as_int();
  }
  return lag == 0 && pending == 0;
}

// Ingest runs (a thread) while a producer writes events of "cheat" and five honest members;
// "cheat" is banned once ingest has applied some of its events. Every entry of "cheat" added
// after ban returned is dead-lettered as banned; those before it were either applied (and
// removed by the ban) or dead-lettered so; "cheat" is listed nowhere; the others lost nothing.
TEST(ModerationStreamTest, EveryEventAfterTheBanIsRefusedAndTheEarlierOnesGoWithTheMember) {
  const std::string prefix = test::unique_prefix();
  const Config config = test::make_config(prefix, kStreamBoards);
  cold::ColdStore cold(test::postgres_url(), prefix);
  cold.migrate();
  const std::string stream = test::events_stream(prefix);
  redis::Connection conn = test::connect_redis();
  conn.command({"XGROUP", "CREATE", stream, "boardkeeper", "0", "MKSTREAM"}).checked();
  const Instant now = at("2026-11-22T12:00:00Z");
  const std::int64_t base_ms = to_epoch_ms(at("2026-11-22T01:00:00Z"));

  std::atomic<bool> stop{false};
  lifecycle::IngestStats stats;
  std::thread consumer([&] {
    redis::Connection c = test::connect_redis();
    cold::ColdStore own(test::postgres_url(), prefix);
    Leaderboards lb(config, c, Clock(now), &own);
    lifecycle::IngestOptions o;
    o.streams = {stream};
    o.consumer = "racer";
    o.batch = 50;
    o.block = 50ms;
    o.trim = false;  // the test reads every entry afterwards
    stats = lifecycle::ingest(c, lb, o, stop);
  });

  // The producer writes kBefore entries, goes on until the ban returned (at most kMost),
  // then kAfter more: so entries are being added while the ban runs, and after it.
  constexpr int kBefore = 1000, kAfter = 1000, kMost = 200000;
  std::atomic<bool> ban_returned{false};
  std::map<std::string, std::int64_t> honest;
  std::atomic<int> produced{0};
  std::thread producer([&] {
    redis::Connection own = test::connect_redis();
    std::vector<redis::Args> chunk;
    int last = kMost;
    for (int n = 0; n < last; ++n) {
      const std::string member = n % 2 == 0 ? "cheat" : "h" + std::to_string(n % 5);
      const std::int64_t value = 1 + n % 7;
      if (member != "cheat") honest[member] += value;
      chunk.push_back({"XADD", stream, "*", "board", "st", "member", member, "value",
                       std::to_string(value), "at", std::to_string(base_ms + n), "id",
                       "e" + std::to_string(n)});
      if (chunk.size() < 20) continue;
      for (const auto& r : own.pipeline(chunk)) r.checked();
      produced += static_cast<int>(chunk.size());
      chunk.clear();
      if (n >= kBefore && last == kMost && ban_returned.load()) last = n + 1 + kAfter;
      std::this_thread::sleep_for(2ms);
    }
    for (const auto& r : own.pipeline(chunk)) r.checked();
    produced += static_cast<int>(chunk.size());
  });

  // A failed assertion below must not leave the threads running (std::terminate).
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& producer;
    std::thread& consumer;
    std::atomic<bool>& ban_returned;
    ~Joiner() {
      ban_returned = true;  // (after a failure: the producer ends)
      if (producer.joinable()) producer.join();
      stop = true;
      if (consumer.joinable()) consumer.join();
    }
  } joiner{stop, producer, consumer, ban_returned};

  // Ban once ingest has applied some of cheat's events, while more are being produced.
  Leaderboards reader(config, conn, Clock(now), &cold);
  const auto ref = reader.resolve("st", "daily", std::nullopt);
  for (int i = 0; i < 3000 && !reader.rank(ref, "cheat"); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(reader.rank(ref, "cheat")) << "ingest never applied an event of cheat";
  redis::Connection admin_conn = test::connect_redis();
  cold::ColdStore admin_cold(test::postgres_url(), prefix);
  Leaderboards admin(config, admin_conn, Clock(now), &admin_cold);
  const service::BanResult ban = admin.moderation().ban("st", "cheat", "stream race");
  ban_returned = true;
  // Every entry above this id was added after ban returned.
  const std::string last_before =
      fields_of(conn.command({"XINFO", "STREAM", stream}).checked())["last-generated-id"];
  const int produced_at_ban = produced.load();
  producer.join();
  bool done = false;
  for (int i = 0; i < 6000 && !done; ++i, std::this_thread::sleep_for(20ms)) {
    done = consumed(conn, stream);
  }
  stop = true;
  consumer.join();
  ASSERT_TRUE(done) << "ingest did not consume the stream";
  const int total = produced.load();
  std::cout << "[ race ] ban after " << produced_at_ban << " of " << total
            << " entries produced; last id before it " << last_before << std::endl;
  EXPECT_TRUE(ban.newly_banned);
  EXPECT_TRUE(ban.removed.found()) << "cheat had applied events when banned";
  ASSERT_LT(total, kMost) << "the ban never returned";

  // The dead letters: cheat's only, each as banned.
  const redis::Reply dead = conn.command({"XRANGE", stream + ":dead", "-", "+"}).checked();
  std::set<std::string> refused;
  for (const auto& e : dead.elements) {
    auto f = fields_of(e.at(1));
    EXPECT_EQ(f["member"], "cheat") << f["reason"];
    EXPECT_NE(f["reason"].find("banned"), std::string::npos) << f["reason"];
    refused.insert(f["stream_id"]);
  }
  const redis::Reply all = conn.command({"XRANGE", stream, "-", "+"}).checked();
  std::int64_t after = 0, cheat_entries = 0;
  for (const auto& e : all.elements) {
    auto f = fields_of(e.at(1));
    if (f["member"] != "cheat") continue;
    ++cheat_entries;
    const std::string id = e.at(0).as_string();
    if (id_of(id) <= id_of(last_before)) continue;
    ++after;
    EXPECT_EQ(refused.count(id), 1U)
        << "entry " << id << " (" << f["id"] << ") of cheat added after the ban was not refused";
  }
  EXPECT_GT(after, 0) << "no event of cheat came after the ban";
  EXPECT_EQ(stats.dead_by_reason["banned"], static_cast<std::int64_t>(dead.elements.size()));
  EXPECT_EQ(stats.dead, static_cast<std::int64_t>(dead.elements.size()));
  // Each entry applied or dead-lettered once; cheat's applied ones were before the ban.
  EXPECT_EQ(stats.applied + stats.dead, total);
  EXPECT_GT(cheat_entries - static_cast<std::int64_t>(refused.size()), 0);

  // cheat is listed nowhere; the honest members have every point.
  EXPECT_FALSE(reader.rank(ref, "cheat"));
  std::map<std::string, std::int64_t> listed;
  for (const auto& s : reader.top(ref, 0, 100)) listed[s.member] = s.points;
  EXPECT_EQ(listed, honest);
  EXPECT_EQ(reader.count(ref), 5);
}

}  // namespace
}  // namespace bk
