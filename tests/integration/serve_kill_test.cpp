// serve SIGKILLed 20 times at random moments while clients write, with the real binary, Redis
// and PostgreSQL: each client sends keyed events and retries each one (no answer, a broken or
// refused connection, a 503) until it is answered, serve coming back on the same port; every
// event is then applied exactly once (the board's points are the model's, also for the events
// whose answer a kill cut off after they were applied) and no retry was taken for another
// request (key_reused).
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "raw_http.h"

namespace bk {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const char* kBoards = R"(  - name: kb
    periods: [daily, weekly]
    max_points: 1000000
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-25T12:00:00Z";
constexpr int kKills = 20;
constexpr int kClients = 4;
constexpr int kMembers = 12;  // shared by the clients: their events add up
constexpr auto kAnswerWithin = 5000ms;
constexpr auto kEventDeadline = 30s;  // an event still unanswered then fails the test

// One serve process at a time on a port of the test's own: started, SIGKILLed, started again.
class KilledServe {
 public:
  KilledServe(std::string config_path, std::string log_stem)
      : config_path_(std::move(config_path)),
        log_stem_(std::move(log_stem)),
        port_(test::free_port()) {}
  ~KilledServe() {
    if (pid_ > 0) kill();
  }
  KilledServe(const KilledServe&) = delete;
  KilledServe& operator=(const KilledServe&) = delete;

  // Started and listening; false (and a test failure) when it did not come up.
  bool start() {
    const std::string log = log_stem_ + "-" + std::to_string(++starts_) + ".log";
    pid_ = test::spawn_cli({"--config", config_path_, "--now", kNow, "serve", "--listen",
                            "127.0.0.1:" + std::to_string(port_)},
                           log);
    return test::listening_port(log) == port_;
  }
  void kill() {
    ::kill(pid_, SIGKILL);
    EXPECT_EQ(test::wait_cli(pid_), 128 + SIGKILL);
    pid_ = -1;
  }
  int port() const { return port_; }

 private:
  std::string config_path_;
  std::string log_stem_;
  int port_;
  int pid_ = -1;
  int starts_ = 0;
};

struct Tally {
  std::mutex mutex;
  std::map<std::string, std::int64_t> model;  // member -> the sum of its answered events
  std::int64_t events = 0, applied = 0, duplicates = 0, unanswered_tries = 0;
  std::int64_t key_reused = 0;        // a retry taken for another request
  std::vector<std::string> failures;  // what no event should get
};

class ServeKillTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string writer = "kill-writer-" + prefix;
  std::string reader = "kill-reader-" + prefix;
  std::string config_path;

  void SetUp() override {
    const std::string writers = "/tmp/" + prefix + "-write-tokens";
    const std::string readers = "/tmp/" + prefix + "-read-tokens";
    std::ofstream(writers) << writer << "\n";
    std::ofstream(readers) << reader << "\n";
    config_path = test::write_text_config(prefix, test::config_text(prefix, kBoards) +
                                                      "serve:\n  write_tokens_file: " + writers +
                                                      "\n  tokens_file: " + readers + "\n");
    const test::RunResult r = test::run_cli({"--config", config_path, "migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string write_request(const std::string& member, int value, const std::string& key) const {
    const std::string body = json{{"value", value}}.dump();
    return "POST /v1/boards/kb/members/" + member + "/scores HTTP/1.1\r\nHost: test\r\n" +
           "Authorization: Bearer " + writer + "\r\nContent-Type: application/json\r\n" +
           "Idempotency-Key: " + key + "\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  }

  // Sends one event until serve answers it otherwise than with a 503, within kEventDeadline.
  // nullopt: never answered.
  std::optional<test::RawAnswer> send_until_answered(int port, const std::string& request,
                                                     std::int64_t& unanswered) const {
    const auto deadline = Clock::now() + kEventDeadline;
    while (Clock::now() < deadline) {
      const auto a = test::raw_exchange(port, request, kAnswerWithin);
      if (a && a->status != 503) return a;
      ++unanswered;
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }

  // Writes events (random member and value, each its own key) until `stop`, each until it is
  // answered; what was answered goes in the tally.
  void client(int id, int port, const std::atomic<bool>& stop, Tally& tally) const {
    std::mt19937 random(static_cast<unsigned>(1000 + id));
    std::uniform_int_distribution<int> member_of(0, kMembers - 1), value_of(1, 9);
    for (int i = 0; !stop.load(); ++i) {
      const std::string member = "m" + std::to_string(member_of(random));
      const int value = value_of(random);
      const std::string key = "c" + std::to_string(id) + "-e" + std::to_string(i);
      std::int64_t unanswered = 0;
      const auto a = send_until_answered(port, write_request(member, value, key), unanswered);
      const json body = a ? json::parse(a->body, nullptr, false) : json();
      std::lock_guard<std::mutex> lock(tally.mutex);
      tally.unanswered_tries += unanswered;
      ++tally.events;
      if (a && a->status == 422 && a->body.find("key_reused") != std::string::npos) {
        ++tally.key_reused;
      }
      if (!a || a->status != 200 || !body.is_object()) {
        tally.failures.push_back(key + ": " + (a ? a->head + "\n" + a->body : "never answered"));
        continue;
      }
      tally.model[member] += value;
      ++(body.value("applied", false) ? tally.applied : tally.duplicates);
    }
  }

  // member -> points of the board's current period of `period`, as the API reads it.
  std::map<std::string, std::int64_t> board_points(int port, const std::string& period) const {
    const auto a = test::raw_exchange(port,
                                      "GET /v1/boards/kb/" + period +
                                          "/top?limit=1000 HTTP/1.1\r\nHost: test\r\n"
                                          "Authorization: Bearer " +
                                          reader + "\r\n\r\n",
                                      kAnswerWithin);
    std::map<std::string, std::int64_t> out;
    if (!a || a->status != 200) {
      ADD_FAILURE() << "top of " << period << ": " << (a ? a->body : "no answer");
      return out;
    }
    const json top = json::parse(a->body);
    for (const json& r : top.at("records")) {
      out[r.at("member").get<std::string>()] = r.at("points").get<std::int64_t>();
    }
    return out;
  }
};

TEST_F(ServeKillTest, EveryKeyedEventRetriedUntilAnsweredIsAppliedOnceThrough20Kills) {
  KilledServe serve(config_path, "/tmp/" + prefix + "-serve");
  ASSERT_TRUE(serve.start());
  std::atomic<bool> stop{false};
  Tally tally;
  std::vector<std::thread> clients;
  for (int id = 0; id < kClients; ++id) {
    clients.emplace_back([&, id] { client(id, serve.port(), stop, tally); });
  }
  std::mt19937 random(7);
  std::uniform_int_distribution<int> up_ms(100, 600);
  bool restarted = true;
  for (int k = 0; k < kKills && restarted; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(up_ms(random)));
    serve.kill();
    restarted = serve.start();
  }
  std::this_thread::sleep_for(300ms);  // the last serve takes writes too
  stop = true;
  for (std::thread& c : clients) c.join();
  ASSERT_TRUE(restarted) << "serve did not come up again";

  for (const std::string& f : tally.failures) ADD_FAILURE() << f;
  EXPECT_EQ(tally.key_reused, 0);
  EXPECT_GT(tally.duplicates, 0) << "no kill cut off the answer of an applied write";
  EXPECT_EQ(tally.applied + tally.duplicates,
            tally.events - static_cast<std::int64_t>(tally.failures.size()));
  for (const char* period : {"daily", "weekly"}) {
    EXPECT_EQ(board_points(serve.port(), period), tally.model) << period;
  }
  std::printf("%lld events (%lld answered as duplicates), %lld tries unanswered\n",
              static_cast<long long>(tally.events), static_cast<long long>(tally.duplicates),
              static_cast<long long>(tally.unanswered_tries));
}

}  // namespace
}  // namespace bk
