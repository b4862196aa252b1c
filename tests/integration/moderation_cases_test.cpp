// Moderation in each state a member can be in, with real Redis and PostgreSQL: remove and ban
// of a member that is hot, spilled, rehydrated (a matrix, each against its model), a removal
// racing the archive of its period, and a ban racing the stream consumer. The random
// interleavings against a model are in moderation_model_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <set>
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

// The producer's side of the race below: it writes kBefore entries, goes on until the ban
// returned (at most kMost), then kAfter more: so entries are being added while the ban runs,
// and after it.
struct Race {
  static constexpr int kBefore = 1000, kAfter = 1000, kMost = 200000;
  std::string stream;
  std::int64_t base_ms = 0;
  std::atomic<bool> ban_returned{false};
  std::map<std::string, std::int64_t> honest;  // the honest members' points
  std::atomic<int> produced{0};
};

void produce(Race& race) {
  redis::Connection own = test::connect_redis();
  std::vector<redis::Args> chunk;
  int last = Race::kMost;
  for (int n = 0; n < last; ++n) {
    const std::string member = n % 2 == 0 ? "cheat" : "h" + std::to_string(n % 5);
    const std::int64_t value = 1 + n % 7;
    if (member != "cheat") race.honest[member] += value;
    chunk.push_back({"XADD", race.stream, "*", "board", "st", "member", member, "value",
                     std::to_string(value), "at", std::to_string(race.base_ms + n), "id",
                     "e" + std::to_string(n)});
    if (chunk.size() < 20) continue;
    for (const auto& r : own.pipeline(chunk)) r.checked();
    race.produced += static_cast<int>(chunk.size());
    chunk.clear();
    if (n >= Race::kBefore && last == Race::kMost && race.ban_returned.load()) {
      last = n + 1 + Race::kAfter;
    }
    std::this_thread::sleep_for(2ms);
  }
  for (const auto& r : own.pipeline(chunk)) r.checked();
  race.produced += static_cast<int>(chunk.size());
}

// Ingest of `stream` in batches of 50 until `stop`.
lifecycle::IngestStats consume(const Config& config, const std::string& prefix,
                               const std::string& stream, Instant now,
                               const std::atomic<bool>& stop) {
  redis::Connection c = test::connect_redis();
  cold::ColdStore own(test::postgres_url(), prefix);
  Leaderboards lb(config, c, Clock(now), &own);
  lifecycle::IngestOptions o;
  o.streams = {stream};
  o.consumer = "racer";
  o.batch = 50;
  o.block = 50ms;
  o.trim = false;  // the test reads every entry afterwards
  return lifecycle::ingest(c, lb, o, stop);
}

// A failed assertion must not leave the threads running (std::terminate).
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
};

// The dead letters of a stream: how many, and the stream ids they name.
struct DeadLetters {
  std::int64_t count = 0;
  std::set<std::string> ids;
};

// The dead letters: cheat's only, each as banned.
DeadLetters expect_only_cheat_dead_lettered(redis::Connection& conn, const std::string& stream) {
  const redis::Reply dead = conn.command({"XRANGE", stream + ":dead", "-", "+"}).checked();
  DeadLetters letters;
  letters.count = static_cast<std::int64_t>(dead.elements.size());
  for (const auto& e : dead.elements) {
    auto f = fields_of(e.at(1));
    EXPECT_EQ(f["member"], "cheat") << f["reason"];
    EXPECT_NE(f["reason"].find("banned"), std::string::npos) << f["reason"];
    letters.ids.insert(f["stream_id"]);
  }
  return letters;
}

// An admin's ban of cheat on board st.
service::BanResult ban_cheat(const Config& config, const std::string& prefix, Instant now) {
  redis::Connection admin_conn = test::connect_redis();
  cold::ColdStore admin_cold(test::postgres_url(), prefix);
  Leaderboards admin(config, admin_conn, Clock(now), &admin_cold);
  return admin.moderation().ban("st", "cheat", "stream race");
}

// Every entry of cheat after `last_before` (added after the ban returned) was refused.
// Returns how many entries of cheat the stream holds.
std::int64_t expect_refused_after(redis::Connection& conn, const std::string& stream,
                                  const std::set<std::string>& refused,
                                  const std::string& last_before) {
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
  return cheat_entries;
}

bool wait_consumed(redis::Connection& conn, const std::string& stream) {
  bool done = false;
  for (int i = 0; i < 6000 && !done; ++i, std::this_thread::sleep_for(20ms)) {
    done = consumed(conn, stream);
  }
  return done;
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
  Race race;
  race.stream = test::events_stream(prefix);
  const std::string& stream = race.stream;
  redis::Connection conn = test::connect_redis();
  conn.command({"XGROUP", "CREATE", stream, "boardkeeper", "0", "MKSTREAM"}).checked();
  const Instant now = at("2026-11-22T12:00:00Z");
  race.base_ms = to_epoch_ms(at("2026-11-22T01:00:00Z"));

  std::atomic<bool> stop{false};
  lifecycle::IngestStats stats;
  std::thread consumer([&] { stats = consume(config, prefix, stream, now, stop); });
  std::thread producer([&] { produce(race); });
  const Joiner joiner{stop, producer, consumer, race.ban_returned};

  // Ban once ingest has applied some of cheat's events, while more are being produced.
  Leaderboards reader(config, conn, Clock(now), &cold);
  const auto ref = reader.resolve("st", "daily", std::nullopt);
  for (int i = 0; i < 3000 && !reader.reads().member({ref}, "cheat"); ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(reader.reads().member({ref}, "cheat")) << "ingest never applied an event of cheat";
  const service::BanResult ban = ban_cheat(config, prefix, now);
  race.ban_returned = true;
  // Every entry above this id was added after ban returned.
  const std::string last_before =
      fields_of(conn.command({"XINFO", "STREAM", stream}).checked())["last-generated-id"];
  const int produced_at_ban = race.produced.load();
  producer.join();
  const bool done = wait_consumed(conn, stream);
  stop = true;
  consumer.join();
  ASSERT_TRUE(done) << "ingest did not consume the stream";
  const int total = race.produced.load();
  std::cout << "[ race ] ban after " << produced_at_ban << " of " << total
            << " entries produced; last id before it " << last_before << std::endl;
  EXPECT_TRUE(ban.newly_banned);
  EXPECT_TRUE(ban.removed.found()) << "cheat had applied events when banned";
  ASSERT_LT(total, Race::kMost) << "the ban never returned";

  const DeadLetters dead = expect_only_cheat_dead_lettered(conn, stream);
  const std::int64_t cheat_entries = expect_refused_after(conn, stream, dead.ids, last_before);
  EXPECT_EQ(stats.dead_by_reason["banned"], dead.count);
  EXPECT_EQ(stats.dead, dead.count);
  // Each entry applied or dead-lettered once; cheat's applied ones were before the ban.
  EXPECT_EQ(stats.applied + stats.dead, total);
  EXPECT_GT(cheat_entries - static_cast<std::int64_t>(dead.ids.size()), 0);

  // cheat is listed nowhere; the honest members have every point.
  EXPECT_FALSE(reader.reads().member({ref}, "cheat"));
  std::map<std::string, std::int64_t> listed;
  for (const auto& s : reader.reads().top_at({ref}, 0, 100)) listed[s.member] = s.points;
  EXPECT_EQ(listed, race.honest);
  EXPECT_EQ(reader.reads().count({ref}), 5);
}

}  // namespace
}  // namespace bk
