// Moderation against a model, with real Redis and PostgreSQL: seeded random interleavings of
// events (one by one and batched), spills, rehydrations, removals, bans and erasures, compared
// after every step, read as the library reads (PostgreSQL's counted path) and as serve does
// with cold ranks from memory (service/cold_index.h). Moderation in each state a member can be
// in, and its races: moderation_cases_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/keys.h"
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
using test::refused_as_banned;

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

// One seed's run: its own prefix (keys and schema), a library for events and reads, another
// (its own connections, as another process) for moderation, and the model.
class ModelRun {
 public:
  explicit ModelRun(unsigned seed) : rng_(seed) {
    cold_.migrate();
    memory_.reads().share_cold_ranks(cold_ranks_);
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
        memory_.reads().load_cold_ranks(memory_.resolve(b, period, std::nullopt));
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

}  // namespace
}  // namespace bk
