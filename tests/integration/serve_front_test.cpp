// serve's front end with the real binary, Redis and PostgreSQL: token sources that yield
// no token stop it (exit 2), /readyz answers per backend, the first request after Redis's
// or PostgreSQL's connections died is served, SIGTERM is prompt with slow clients
// connected, and a sweep of malformed requests each gets a JSON 4xx while serve keeps
// answering.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "harness.h"
#include "raw_http.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using test::RawAnswer;
using test::RawConnection;

const char* kBoards = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-20T12:00:00Z";
constexpr auto kAnswerWithin = 10000ms;  // generous: a loaded 2-core machine
const std::string kTop = "/v1/boards/pts/daily/top?limit=20";

std::string get(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\n\r\n";
}

// The exit code of a spawned command that ends within `timeout`; nullopt while it runs.
std::optional<int> exit_within(int pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
}

// A running `serve` of a config of the test's own.
class Served {
 public:
  Served(const std::string& config_path, const std::string& log, int workers = 4)
      : pid_(test::spawn_cli({"--config", config_path, "--now", kNow, "serve", "--listen",
                              "127.0.0.1:0", "--workers", std::to_string(workers)},
                             log)),
        reaper_{pid_},
        port_(test::listening_port(log)) {}

  std::optional<RawAnswer> ask(const std::string& request) const {
    return test::raw_exchange(port_, request, kAnswerWithin);
  }
  int status_of(const std::string& target) const {
    const auto a = ask(get(target));
    return a ? a->status : 0;
  }
  int port() const { return port_; }
  int pid() const { return pid_; }

 private:
  int pid_;
  test::Reaper reaper_;
  int port_;
};

class ServeFrontTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string log = "/tmp/" + prefix + "-serve.log";

  // Members m00..m19 with points 100..81 on pts daily, all but 5 spilled by a tick.
  void fill(redis::Connection& conn, const std::string& config_text, const std::string& path) {
    const Config config = parse_config(config_text, path, {});
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)));
    std::vector<service::Update> updates;
    for (int i = 0; i < 20; ++i) {
      updates.push_back({"pts", (i < 10 ? "m0" : "m") + std::to_string(i), 100 - i, {}, ""});
    }
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, service::UpdateStatus::applied);
    ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
    ASSERT_EQ(test::run_cli({"--config", path, "--now", kNow, "tick"}).exit_code, 0);
  }
  std::string config_on_shared(const std::string& pg_url = "") {
    const std::string text = test::config_text(prefix, kBoards, pg_url);
    const std::string path = test::write_text_config(prefix, text);
    redis::Connection conn = test::connect_redis();
    fill(conn, text, path);
    return path;
  }
};

// --- Fail-closed tokens ---------------------------------------------------------------

TEST_F(ServeFrontTest, ATokenSourceWithoutATokenStopsServeWithExit2) {
  const std::string base = test::config_text(prefix, kBoards);
  const auto with_file = [&](const std::string& name, const std::string& content) {
    const std::string file = "/tmp/" + prefix + "-" + name;
    std::ofstream(file) << content;
    return test::write_text_config(prefix + "-" + name,
                                   base + "serve:\n  tokens_file: " + file + "\n");
  };
  struct Case {
    std::string what;
    std::string config;
    std::vector<std::string> env;
    std::string named;  // the message names the source
  };
  const std::string plain = test::write_text_config(prefix, base);
  const std::vector<Case> cases{
      {"an empty tokens_file", with_file("empty", ""), {}, "serve.tokens_file"},
      {"a tokens_file of comments and blank lines",
       with_file("comments", "# readers\n\n   \n# none yet\n"),
       {},
       "serve.tokens_file"},
      {"a tokens_file that cannot be read",
       test::write_text_config(prefix + "-missing",
                               base + "serve:\n  tokens_file: /nonexistent/t\n"),
       {},
       "serve.tokens_file"},
      {"BOARDKEEPER_SERVE_TOKENS of separators",
       plain,
       {"BOARDKEEPER_SERVE_TOKENS= , ,"},
       "BOARDKEEPER_SERVE_TOKENS"},
      {"BOARDKEEPER_SERVE_TOKENS empty",
       plain,
       {"BOARDKEEPER_SERVE_TOKENS="},
       "BOARDKEEPER_SERVE_TOKENS"},
      {"a good env token but an empty file",
       with_file("empty2", "\n"),
       {"BOARDKEEPER_SERVE_TOKENS=good-token"},
       "serve.tokens_file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    // A serve that starts anyway is stopped after 5 s (and exits 0): the test fails then.
    const test::RunResult r =
        test::run_cli({"--config", c.config, "serve", "--listen", "127.0.0.1:0"}, c.env, 5s);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("good-token"), std::string::npos) << r.err;
  }
}

TEST_F(ServeFrontTest, NoTokenSourceServesOpenlyWithOneWarning) {
  const std::string path = test::write_text_config(prefix, test::config_text(prefix, kBoards));
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  Served s(path, log);
  EXPECT_EQ(s.status_of("/v1/boards/pts/periods"), 200);
  kill(s.pid(), SIGTERM);
  EXPECT_EQ(exit_within(s.pid(), 20s), std::optional<int>(0));
  const std::string logged = test::read_file(log);
  std::size_t warnings = 0;
  std::istringstream lines(logged);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("warn") != std::string::npos &&
        line.find("without authentication") != std::string::npos) {
      ++warnings;
    }
  }
  EXPECT_EQ(warnings, 1U) << logged;
}

// --- /readyz ----------------------------------------------------------------------------

json readyz(const Served& s, int* status) {
  const auto a = s.ask(get("/readyz"));
  *status = a ? a->status : 0;
  return a ? json::parse(a->body, nullptr, false) : json();
}

TEST_F(ServeFrontTest, ReadyzAnswersPerBackendInJson) {
  test::RedisServer redis;
  const std::string text = test::config_text_for(redis.url(), prefix, kBoards);
  const std::string path = test::write_text_config(prefix + "-own", text);
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  Served s(path, log);
  int status = 0;
  json body = readyz(s, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, json::parse(R"({"ready": true, "redis": "ok", "postgres": "ok"})")) << body;

  // PostgreSQL unreachable: still ready (nearly every read needs Redis only), and said.
  const std::string no_pg = test::write_text_config(
      prefix + "-nopg", test::config_text_for(redis.url(), prefix, kBoards,
                                              "postgresql://boardkeeper@127.0.0.1:1/boards"));
  Served t(no_pg, log + "2");
  body = readyz(t, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, json::parse(R"({"ready": true, "redis": "ok", "postgres": "unreachable"})"))
      << body;

  // Redis stops: 503 within a few probe rounds; back when it is.
  redis.stop();
  for (int i = 0; i < 100 && status != 503; ++i, std::this_thread::sleep_for(100ms)) {
    body = readyz(s, &status);
  }
  EXPECT_EQ(status, 503);
  EXPECT_EQ(body, json::parse(R"({"ready": false, "redis": "unreachable", "postgres": "ok"})"))
      << body;
  EXPECT_EQ(s.status_of("/healthz"), 200);
  redis.start();
  for (int i = 0; i < 100 && status != 200; ++i, std::this_thread::sleep_for(100ms)) {
    body = readyz(s, &status);
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body.is_object() ? body["redis"] : json(), "ok") << body;
}

// --- The first request after a backend's connections died ---------------------------

// Several requests at once, so that several pooled sessions exist.
void warm_up(const Served& s, const std::string& target) {
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      for (int j = 0; j < 5; ++j) ok += s.status_of(target) == 200 ? 1 : 0;
    });
  }
  for (auto& c : clients) c.join();
  ASSERT_EQ(ok.load(), 20);
}

TEST_F(ServeFrontTest, TheFirstRequestsAfterRedisConnectionsDieAreServed) {
  test::RedisServer redis;
  const std::string text = test::config_text_for(redis.url(), prefix, kBoards);
  const std::string path = test::write_text_config(prefix + "-own", text);
  {
    redis::Connection conn = redis.connect();
    fill(conn, text, path);
  }
  Served s(path, log, 4);
  const std::string member = "/v1/boards/pts/daily/members/m00";
  warm_up(s, member);
  redis::Connection admin = redis.connect();
  const std::int64_t killed =
      admin.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).as_int();
  EXPECT_GE(killed, 2);  // the sessions' connections (and the readiness probe's)
  for (int i = 0; i < 8; ++i) {
    const auto a = s.ask(get(member));
    ASSERT_TRUE(a) << i;
    EXPECT_EQ(a->status, 200) << "request " << i << " after CLIENT KILL: " << a->body;
  }
}

// One psql value without the newline psql ends it with.
std::string psql_value(const std::string& sql) {
  std::string out = test::psql(sql);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

TEST_F(ServeFrontTest, TheFirstRequestsAfterPostgresConnectionsDieAreServed) {
  const std::string base = test::postgres_url();
  const std::string app = prefix + "_serve";
  const std::string path = config_on_shared(
      base + (base.find('?') == std::string::npos ? "?" : "&") + "application_name=" + app);
  Served s(path, log, 4);
  warm_up(s, kTop);  // 20 rows, 15 of them spilled: every page reads PostgreSQL
  const std::string pids = psql_value(
      "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE application_name = '" + app +
      "'");
  ASSERT_FALSE(pids.empty());
  test::psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN (" + pids + ")");
  std::string left = "x";
  for (int i = 0; i < 100 && !left.empty(); ++i, std::this_thread::sleep_for(50ms)) {
    left = psql_value("SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE pid IN (" +
                      pids + ")");
  }
  ASSERT_TRUE(left.empty()) << "still there: " << left;
  for (int i = 0; i < 8; ++i) {
    const auto a = s.ask(get(kTop));
    ASSERT_TRUE(a) << i;
    EXPECT_EQ(a->status, 200) << "request " << i << " after pg_terminate_backend: " << a->body;
  }
}

// --- SIGTERM ------------------------------------------------------------------------------

TEST_F(ServeFrontTest, SigtermWithFiveSlowClientsExitsWithinFiveSeconds) {
  const std::string path = test::write_text_config(prefix, test::config_text(prefix, kBoards));
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  Served s(path, log);
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 5; ++i) slow.push_back(std::make_unique<RawConnection>(s.port()));
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string head = "GET /v1/boards/pts/daily/top HTTP/1.1\r\nHost: test\r\nX-Slow: ";
    for (std::size_t i = 0; !stop && i < 400; ++i) {  // at most 80 s
      for (auto& c : slow) c->send(std::string(1, i < head.size() ? head[i] : 'a'));
      std::this_thread::sleep_for(200ms);
    }
  });
  std::this_thread::sleep_for(1s);
  const auto started = std::chrono::steady_clock::now();
  kill(s.pid(), SIGTERM);
  const std::optional<int> code = exit_within(s.pid(), 20s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  stop = true;
  trickle.join();
  ASSERT_TRUE(code) << "serve still runs 20 s after SIGTERM";
  EXPECT_EQ(*code, 0) << test::read_file(log);
  EXPECT_LT(took.count(), 5000) << "SIGTERM took " << took.count() << " ms";
}

TEST_F(ServeFrontTest, ARequestServeWouldRefuseIsRefusedBeforeItsBodyIsRead) {
  const std::string tokens = "/tmp/" + prefix + "-tokens";
  std::ofstream(tokens) << "s3cret\n";
  // A body deadline longer than the test waits: an answer only after the body would be late.
  const std::string path = test::write_text_config(prefix, test::config_text(prefix, kBoards) +
                                                               "serve:\n  tokens_file: " + tokens +
                                                               "\n  body_timeout: 30s\n");
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  Served s(path, log);
  const auto head = [](const std::string& target, const std::string& extra) {
    return "POST " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" +
           extra + "Content-Length: 1000000\r\n\r\n";
  };
  // No token: 401 while the megabyte has not been sent.
  RawConnection anonymous(s.port());
  anonymous.send(head("/v1/boards/pts/daily/members", ""));
  const auto a = anonymous.answer(5000ms);
  ASSERT_TRUE(a) << "no answer before the body";
  EXPECT_EQ(a->status, 401) << a->body;
  EXPECT_TRUE(nlohmann::json::parse(a->body, nullptr, false).contains("error")) << a->body;
  EXPECT_EQ(a->header("www-authenticate"), "Bearer");
  EXPECT_TRUE(anonymous.closed_within(kAnswerWithin));
  // A token, but a route that takes no body: 405 likewise.
  RawConnection elsewhere(s.port());
  elsewhere.send(head("/v1/boards/pts/daily/top", "Authorization: Bearer s3cret\r\n"));
  const auto b = elsewhere.answer(5000ms);
  ASSERT_TRUE(b) << "no answer before the body";
  EXPECT_EQ(b->status, 405) << b->body;
  EXPECT_TRUE(nlohmann::json::parse(b->body, nullptr, false).contains("error")) << b->body;
  // With the token, members takes its body.
  const std::string body = R"({"ids": ["m00"]})";
  const auto c = s.ask(
      "POST /v1/boards/pts/daily/members HTTP/1.1\r\nHost: test\r\n"
      "Authorization: Bearer s3cret\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 200) << c->body;
}

// --- Hostile input ------------------------------------------------------------------------

std::string post(const std::string& target, const std::string& body,
                 const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" +
         extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

using Requests = std::vector<std::pair<std::string, std::string>>;

const char* const kHostileTop = "/v1/boards/pts/daily/top";
const char* const kHostileMembers = "/v1/boards/pts/daily/members";
const char* const kHttp11 = " HTTP/1.1\r\nHost: test\r\n";

// Methods, request lines and versions.
Requests hostile_request_lines() {
  const std::string top = kHostileTop, h = kHttp11;
  return {
      // Methods.
      {"PUT", "PUT " + top + h + "Content-Length: 0\r\n\r\n"},
      {"DELETE", "DELETE " + top + h + "\r\n"},
      {"PATCH", "PATCH " + top + h + "Content-Length: 2\r\n\r\n{}"},
      {"BREW", "BREW " + top + h + "\r\n"},
      {"lower-case get", "get " + top + h + "\r\n"},
      {"TRACE", "TRACE " + top + h + "\r\n"},
      {"CONNECT", "CONNECT test:443" + h + "\r\n"},
      {"POST to top", post(top, "{}")},
      // Request lines and versions.
      {"HTTP/0.9", "GET " + top + "\r\n\r\n"},
      {"HTTP/2.0", "GET " + top + " HTTP/2.0\r\nHost: test\r\n\r\n"},
      {"garbage line", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"},
      {"target without /", "GET v1/boards/pts/daily/top" + h + "\r\n"},
      {"target *", "GET *" + h + "\r\n"},
      {"control byte in target", "GET /v1/\x01" + h + "\r\n"},
      {"request line of 9 KiB", "GET /v1/" + std::string(9 * 1024, 'a') + h + "\r\n"},
  };
}

Requests hostile_headers() {
  const std::string top = kHostileTop, h = kHttp11;
  std::string many_headers;
  for (int i = 0; i < 10000; ++i) many_headers += "X-H" + std::to_string(i) + ": v\r\n";
  return {
      // Headers.
      {"missing Host", "GET " + top + " HTTP/1.1\r\n\r\n"},
      {"two Hosts", "GET " + top + h + "Host: other\r\n\r\n"},
      {"a 20 KiB header", "GET " + top + h + "X-Big: " + std::string(20 * 1024, 'b') + "\r\n\r\n"},
      {"10,000 headers", "GET " + top + h + many_headers + "\r\n"},
      {"header without colon", "GET " + top + h + "NoColon\r\n\r\n"},
      {"space before colon", "GET " + top + " HTTP/1.1\r\nHost : test\r\n\r\n"},
      {"NUL in a header", "GET " + top + h + std::string("X-A: a\0b\r\n\r\n", 12)},
  };
}

Requests hostile_bodies() {
  const std::string top = kHostileTop, members = kHostileMembers, h = kHttp11;
  std::string many_ids = "{\"ids\":[";
  for (int i = 0; i <= 1000; ++i) many_ids += (i == 0 ? "\"m" : ",\"m") + std::to_string(i) + "\"";
  many_ids += "]}";
  return {
      // Bodies.
      {"Content-Length and Transfer-Encoding",
       "POST " + members + h + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
      {"bad chunk size",
       "POST " + members + h + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
      {"huge chunk size",
       "POST " + members + h + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nab\r\n"},
      {"Transfer-Encoding gzip", "POST " + members + h + "Transfer-Encoding: gzip\r\n\r\n"},
      {"negative Content-Length", "POST " + members + h + "Content-Length: -1\r\n\r\n"},
      {"Content-Length abc", "POST " + members + h + "Content-Length: abc\r\n\r\n"},
      {"two Content-Lengths",
       "POST " + members + h + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"},
      {"body too large", "POST " + members + h + "Content-Length: 5000000\r\n\r\n{\"ids\":["},
      {"body on GET", "GET " + top + h + "Content-Length: 5\r\n\r\nhello"},
      {"empty body", post(members, "")},
      {"non-object JSON", post(members, "[1,2,3]")},
      {"ids of numbers", post(members, R"({"ids":[1,2]})")},
      {"1001 ids in the body", post(members, many_ids)},
      {"not JSON", post(members, "{\"ids\": [\"a\"")},
      {"body not UTF-8", post(members, "{\"ids\":[\"\xff\xfe\"]}")},
  };
}

// Paths, percent-encodings and parameters; last, the body that crashed serve before.
Requests hostile_targets() {
  const std::string top = kHostileTop, members = kHostileMembers, h = kHttp11;
  std::string query_ids;
  for (int i = 0; i <= 1000; ++i) query_ids += (i == 0 ? "m" : ",m") + std::to_string(i);
  return {
      // Paths and percent-encodings.
      {"%zz", get(members + "/%zz")},
      {"%00 in a member", get(members + "/a%00b")},
      {"overlong UTF-8", get(members + "/%C0%AF")},
      {"dot-dot segments", get("/v1/boards/../boards/pts/daily/top")},
      {"empty board", get("/v1/boards//daily/top")},
      {"unknown period", get("/v1/boards/pts/nope/top")},
      {"unknown route", get("/v1/nothing/here")},
      {"member id of 513 bytes", get(members + "/" + std::string(513, 'x'))},
      // Parameters.
      {"limit=-1", get(top + "?limit=-1")},
      {"limit=1e3", get(top + "?limit=1e3")},
      {"limit=0x10", get(top + "?limit=0x10")},
      {"duplicate limit", get(top + "?limit=1&limit=2")},
      {"unknown parameter", get(top + "?offset=5")},
      {"%00 in period_id", get(top + "?period_id=2026-11-25%00")},
      {"bad period_id", get(top + "?period_id=2026-13-45")},
      {"future period_id", get(top + "?period_id=2027-01-01")},
      {"bad cursor", get(top + "?cursor=!!!")},
      {"made-up cursor", get(top + "?cursor=bm90IGEgY3Vyc29y")},
      {"k=-5", get(members + "/m00/around?k=-5")},
      {"ids empty", get(members + "?ids=")},
      {"1001 ids in the query", get(members + "?ids=" + query_ids)},
      {"OPTIONS from an unlisted origin",
       "OPTIONS " + top + h +
           "Origin: https://evil.example\r\nAccess-Control-Request-Method: GET\r\n\r\n"},
      // Last: it crashed serve before (stack overflow in the JSON library).
      {"JSON body 100,000 deep",
       post(members, "{\"ids\":" + std::string(100000, '[') + std::string(100000, ']') + "}")},
  };
}

Requests hostile_requests() {
  Requests all;
  for (const Requests& part :
       {hostile_request_lines(), hostile_headers(), hostile_bodies(), hostile_targets()}) {
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

TEST_F(ServeFrontTest, MalformedRequestsEachGetAJson4xxAndServeKeepsAnswering) {
  const std::string path = config_on_shared();
  Served s(path, log, 4);
  const auto requests = hostile_requests();
  ASSERT_GE(requests.size(), 40U);
  for (const auto& [what, request] : requests) {
    SCOPED_TRACE(what);
    const auto a = s.ask(request);
    ASSERT_TRUE(a || exit_within(s.pid(), 0ms) == std::nullopt)
        << "serve died on it: " << test::read_file(log);
    if (!a) {
      ADD_FAILURE() << "no answer";
      continue;
    }
    EXPECT_GE(a->status, 400) << a->head;
    EXPECT_LT(a->status, 500) << a->head << "\n" << a->body;
    const json body = json::parse(a->body, nullptr, false);
    EXPECT_TRUE(body.is_object() && body.contains("error") && body["error"].is_string())
        << a->head << "\n"
        << a->body;
    EXPECT_EQ(s.status_of("/healthz"), 200) << "after it";
    EXPECT_EQ(s.status_of(kTop), 200) << "after it";
  }
}

}  // namespace
}  // namespace bk
