// The README's reward consumer (docs/examples/reward_consumer.py, run as it is) against real
// Redis and PostgreSQL: tiered boards' periods closed by `boardkeeper tick`, the consumer
// SIGKILLed before paying, in the middle of a payment and between paying and acknowledging
// (each point held by a lock the test owns, so that the kill lands there every run), then
// restarted until its stream is done: every (period, member) of a paid tier paid exactly once,
// with the amount the program's table gives the tier, and every entry acknowledged.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include "cold/cold_store.h"
#include "harness.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;
using service::Leaderboards;
using service::Update;
using service::UpdateStatus;

const std::string kProgram = std::string(BK_SOURCE_DIR) + "/docs/examples/reward_consumer.py";
// What the program reads and pays, as it spells them: its stream, group and consumer name, and
// its PRIZES table (gems per tier; the boards' other tiers, here bronze, get nothing).
const std::string kStream = "lb:closes";
const std::string kGroup = "rewards";
const std::string kConsumer = "payer-1";
const std::map<std::string, int> kPrizes{{"champion", 1000}, {"gold", 300}, {"silver", 50}};

const Instant kDay = *parse_rfc3339("2027-03-01T00:00:00Z");

// Hourly boards on the program's stream: a desc one with tiers by rank, percentile and points,
// an asc one with a tier the program does not pay, and one without tiers (nothing to pay).
const char* const kBoards = R"(  - name: gems
    periods: [hourly]
    max_points: 1000000
    hot_keep: 4
    display: 2
    archive: {grace: 1m}
    retention: {default: 3650d}
    closes_stream: lb:closes
    tiers:
      - {name: champion, top: 1}
      - {name: gold, top: "20%"}
      - {name: silver, min_points: 25}
  - name: race
    periods: [hourly]
    order: asc
    max_points: 1000000
    hot_keep: 4
    display: 2
    archive: {grace: 1m}
    retention: {default: 3650d}
    closes_stream: lb:closes
    tiers:
      - {name: champion, top: 1}
      - {name: gold, top: 3}
      - {name: silver, max_points: 15}
      - {name: bronze, max_points: 25}
  - name: plain
    periods: [hourly]
    max_points: 1000000
    hot_keep: 4
    display: 2
    archive: {grace: 1m}
    retention: {default: 3650d}
    closes_stream: lb:closes
)";

// A row of the program's ledger: (entry id, member) is its primary key.
struct LedgerKey {
  std::string entry;
  std::string member;
};

// A transaction of the test's own holding an unpaid ledger row of (entry, member): the
// program's insert of that row waits for it, so the program stops right there until release().
class Hold {
 public:
  Hold(const std::string& schema, const LedgerKey& key)
      : conn_(test::postgres_url()), work_(conn_) {
    work_.exec("INSERT INTO " + schema + ".ledger VALUES (" + work_.quote(key.entry) + ", " +
               work_.quote(key.member) + ", 'held by the test', 0)");
  }
  void release() { work_.abort(); }

 private:
  pqxx::connection conn_;
  pqxx::work work_;
};

// The ledger as the program's table says it should be: each notice's members in a paid tier,
// keyed by the notice's entry id (`<seq>-1`).
std::string expected_ledger(const std::string& prefix) {
  std::string gems = "CASE h.tier";
  for (const auto& [tier, g] : kPrizes) gems += " WHEN '" + tier + "' THEN " + std::to_string(g);
  return "SELECT n.seq || '-1', h.member, h.tier, " + gems + " END FROM " + prefix +
         ".period_closes n JOIN " + prefix +
         ".history h USING (board, period, period_id) WHERE h.tier IS NOT NULL AND " + gems +
         " END IS NOT NULL";
}

class RewardConsumerTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  test::RedisServer server;  // its own: the test pauses its writes
  std::string path =
      test::write_text_config(prefix, test::config_text_for(server.url(), prefix, kBoards));
  Config config = load_config(path, {});
  redis::Connection conn = server.connect();
  cold::ColdStore cold{test::postgres_url(), prefix};
  std::string app = prefix + "-payer";  // the consumer's application_name in PostgreSQL
  std::string log;                      // the last run's output
  int runs = 0;

  int running = -1;  // the consumer's pid while it runs

  void SetUp() override { cold.migrate(); }
  void TearDown() override {
    const test::Reaper reap{running};
    if (HasFailure()) return;  // the runs' logs stay for a look
    for (int run = 1; run <= runs; ++run) std::remove(log_of(run).c_str());
  }
  std::string log_of(int run) const {
    return "/tmp/bk-reward-consumer-" + prefix + "-" + std::to_string(run) + ".log";
  }

  // `members` members score in hour `hour` of kDay on each board.
  void fill(int hour, int members) {
    const Instant start = kDay + std::chrono::hours{hour};
    Leaderboards lb(config, conn, Clock(start + 30min), &cold);
    for (const std::string board : {"gems", "race", "plain"}) {
      std::vector<Update> events;
      for (int i = 0; i < members; ++i) {
        events.push_back(Update{board, "m" + std::to_string(i), 10 + (i * 7) % 23,
                                start + std::chrono::seconds{i}, ""});
      }
      for (const auto& r : lb.apply(events)) ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
    }
  }

  // `boardkeeper tick` at `now`: archives the hours that ended and publishes their notices.
  void tick(Instant now) {
    const auto r = test::run_cli({"--config", path, "--now=" + format_rfc3339(now), "tick"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  // The program, started as the README runs it, with the test's servers (and its schema, where
  // its ledger goes and boardkeeper's history is).
  int start_consumer() {
    EXPECT_EQ(running, -1);
    log = log_of(++runs);
    return running = test::spawn_program(
               {BK_PYTHON, kProgram},
               {"REDIS_URL=" + server.url(), "DATABASE_URL=" + test::postgres_url(),
                "PGOPTIONS=-c search_path=" + prefix, "PGAPPNAME=" + app},
               log);
  }
  void kill_consumer(int pid) {
    ASSERT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the consumer ended early:\n"
                                                 << test::read_file(log);
    kill(pid, SIGKILL);
    test::wait_cli(pid);
    running = -1;
  }
  // The program started and waiting for entries, its ledger and its group made.
  int start_consumer_until_ready() {
    const int pid = start_consumer();
    EXPECT_TRUE(wait_for([&] {
      return sql("SELECT to_regclass('" + prefix + ".ledger') IS NOT NULL") == "t" &&
             !conn.command({"XINFO", "GROUPS", kStream}).is_error();
    })) << test::read_file(log);
    return pid;
  }

  // psql's answer without its last newline.
  std::string sql(const std::string& statement) {
    std::string out = test::psql(statement);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  std::int64_t count(const std::string& statement) { return std::stoll(sql(statement)); }
  std::int64_t paid(const std::string& entry) {
    return count("SELECT count(*) FROM " + prefix + ".ledger WHERE entry_id = '" + entry + "'");
  }

  // Waits until `done` holds (up to 30 s); false when it never did.
  template <typename Done>
  bool wait_for(Done done) {
    for (auto until = std::chrono::steady_clock::now() + 30s;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(20ms)) {
      if (done()) return true;
    }
    return false;
  }
  // Waits until the consumer's transaction waits for a lock: whether it inserted anything
  // before (a transaction id is taken at the first row it writes); nullopt when it never waited.
  std::optional<bool> blocked_having_written() {
    std::string xid;
    if (!wait_for([&] {
          xid =
              sql("SELECT coalesce(backend_xid::text, 'none') FROM pg_stat_activity WHERE "
                  "application_name = '" +
                  app + "' AND wait_event_type = 'Lock'");
          return !xid.empty();
        })) {
      return std::nullopt;
    }
    return xid != "none";
  }

  // The entries of the program's stream: id -> board, period, period_id.
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> entries() {
    std::vector<std::pair<std::string, std::map<std::string, std::string>>> out;
    const redis::Reply r = conn.command({"XRANGE", kStream, "-", "+"});
    for (const redis::Reply& e : r.checked().elements) {
      std::map<std::string, std::string> fields;
      const redis::Reply& f = e.at(1);
      for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
        fields[f.at(i).as_string()] = f.at(i + 1).as_string();
      }
      out.emplace_back(e.at(0).as_string(), std::move(fields));
    }
    return out;
  }
  // The members the program pays for a notice, in the order it pays them (its history_sql's:
  // member bytes within a rank).
  std::vector<std::string> payees(const std::map<std::string, std::string>& notice) {
    std::string tiers;
    for (const auto& [tier, gems] : kPrizes) tiers += (tiers.empty() ? "'" : ", '") + tier + "'";
    std::istringstream rows(sql("SELECT member FROM " + prefix + ".history WHERE board = '" +
                                notice.at("board") + "' AND period = '" + notice.at("period") +
                                "' AND period_id = '" + notice.at("period_id") + "' AND tier IN (" +
                                tiers +
                                ") ORDER BY rank, convert_to(member, 'UTF8')"));  // psql: no quotes
    std::vector<std::string> out;
    for (std::string m; std::getline(rows, m);) out.push_back(m);
    return out;
  }
  // The entries delivered to the program and not acknowledged.
  std::vector<std::string> pending() {
    std::vector<std::string> out;
    const auto r = conn.command({"XPENDING", kStream, kGroup, "-", "+", "1000"});
    for (const redis::Reply& e : r.checked().elements) {
      EXPECT_EQ(e.at(1).as_string(), kConsumer);
      out.push_back(e.at(0).as_string());
    }
    return out;
  }
  // The positions of the notices (of `entries()`) that pay two members or more.
  std::vector<std::size_t> paying_several(
      const std::vector<std::pair<std::string, std::map<std::string, std::string>>>& notices) {
    std::vector<std::size_t> several;
    for (std::size_t i = 0; i < notices.size(); ++i) {
      if (payees(notices[i].second).size() >= 2) several.push_back(i);
    }
    return several;
  }
  bool is_pending(const std::string& entry) {
    const auto p = pending();
    return std::find(p.begin(), p.end(), entry) != p.end();
  }
  // Started with `key` held, the program waits at that row's insert having written before or
  // not (`wrote`); `at_hold` runs there (it may release the hold itself); then SIGKILL.
  void kill_at_hold(
      const LedgerKey& key, bool wrote, const std::function<void(Hold&)>& at_hold = [](Hold&) {}) {
    Hold hold(prefix, key);
    const int pid = start_consumer();
    const auto blocked = blocked_having_written();
    ASSERT_TRUE(blocked) << "it never reached the held row:\n" << test::read_file(log);
    EXPECT_EQ(*blocked, wrote) << "held at " << key.entry << " " << key.member;
    at_hold(hold);
    kill_consumer(pid);
    hold.release();
  }
  // Waits until the program's group was given every entry and has none pending.
  void wait_until_done() {
    EXPECT_TRUE(wait_for([&] {
      const redis::Reply groups = conn.command({"XINFO", "GROUPS", kStream});
      const redis::Reply& group = groups.at(0);
      std::map<std::string, std::string> info;
      for (std::size_t i = 0; i + 1 < group.elements.size(); i += 2) {
        const redis::Reply& v = group.at(i + 1);
        info[group.at(i).as_string()] =
            v.type == redis::Reply::Type::integer ? std::to_string(v.integer) : v.str;
      }
      return info["last-delivered-id"] == entries().back().first && info["pending"] == "0";
    })) << test::read_file(log);
  }
  // Every notice's members in a paid tier, each paid once with its tier's amount; no one else.
  void expect_ledger_as_the_table_says() {
    const std::string ledger = "SELECT entry_id, member, tier, gems FROM " + prefix + ".ledger";
    const std::string want = expected_ledger(prefix);
    EXPECT_EQ(count("SELECT count(*) FROM (" + want + " EXCEPT " + ledger + ") missing"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM (" + ledger + " EXCEPT " + want + ") extra"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM (SELECT n.board, n.period, n.period_id, l.member FROM " +
                    prefix + ".ledger l JOIN " + prefix +
                    ".period_closes n ON l.entry_id = n.seq || '-1' GROUP BY 1, 2, 3, 4 HAVING "
                    "count(*) > 1) twice"),
              0);
    EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".ledger"),
              count("SELECT count(*) FROM (" + want + ") w"));
    // Each paid tier was paid somewhere; bronze (not in the table) and the untiered board never.
    EXPECT_EQ(sql("SELECT string_agg(DISTINCT tier, ',' ORDER BY tier) FROM " + prefix + ".ledger"),
              "champion,gold,silver");
  }
};

TEST_F(RewardConsumerTest, KilledBeforeDuringAndAfterPayingItStillPaysEveryPeriodOnce) {
  // 0. Started before anything closed: it makes its ledger and its group, and waits.
  kill_consumer(start_consumer_until_ready());
  for (int h = 0; h < 3; ++h) fill(h, 10 + 2 * h);
  tick(kDay + 3h + 2min);
  const auto notices = entries();
  ASSERT_EQ(notices.size(), 9u);  // 3 boards x 3 hours
  // The points are taken on the first and the last notice that pay several members.
  const std::vector<std::size_t> several = paying_several(notices);
  ASSERT_GE(several.size(), 2u);
  const std::string one = notices[several.front()].first;
  const auto one_payees = payees(notices[several.front()].second);
  const auto one_paid = static_cast<std::int64_t>(one_payees.size());
  const std::string last = notices[several.back()].first;
  std::vector<std::string> from_last;  // what step 4 leaves pending
  for (std::size_t i = several.back(); i < notices.size(); ++i)
    from_last.push_back(notices[i].first);

  // 1. Before paying: held at its first payee's row, nothing written.
  ASSERT_NO_FATAL_FAILURE(kill_at_hold({one, one_payees.front()}, false));
  EXPECT_EQ(paid(one), 0);
  EXPECT_TRUE(is_pending(one));
  // 2. In the middle of its payment: held at its last payee's row, the others inserted; the
  // kill rolls them back, and the entry stays pending, for the restarted program to read first.
  ASSERT_NO_FATAL_FAILURE(kill_at_hold({one, one_payees.back()}, true));
  EXPECT_EQ(paid(one), 0);
  EXPECT_TRUE(is_pending(one));
  // 3. Paid, not acknowledged: Redis takes no writes while the payment commits, so the program
  // is stopped at its XACK.
  ASSERT_NO_FATAL_FAILURE(kill_at_hold({one, one_payees.back()}, true, [&](Hold& hold) {
    ASSERT_FALSE(conn.command({"CLIENT", "PAUSE", "60000", "WRITE"}).is_error());
    hold.release();
    EXPECT_TRUE(wait_for([&] { return paid(one) == one_paid; }));
    std::this_thread::sleep_for(200ms);  // its XACK reaches Redis and waits there
  }));
  conn.command({"CLIENT", "UNPAUSE"});
  EXPECT_EQ(paid(one), one_paid);
  EXPECT_TRUE(is_pending(one));
  // 4. Restarted: its pending entry is paid again, which pays nobody twice, and acknowledged;
  // the next notices are paid, until it is killed in the middle of the last one's payment.
  ASSERT_NO_FATAL_FAILURE(
      kill_at_hold({last, payees(notices[several.back()].second).back()}, true, [&](Hold&) {
        EXPECT_FALSE(is_pending(one));
        EXPECT_EQ(paid(one), one_paid);
      }));
  EXPECT_EQ(paid(last), 0);
  EXPECT_EQ(pending(), from_last);
  // 5. Restarted while more periods close: it pays what it left and what comes, and is done.
  const int pid = start_consumer();
  fill(3, 9);
  tick(kDay + 4h + 2min);
  ASSERT_EQ(entries().size(), 12u);
  wait_until_done();
  kill_consumer(pid);
  EXPECT_TRUE(pending().empty());
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".period_closes"), 12);
  expect_ledger_as_the_table_says();
}

}  // namespace
}  // namespace bk
