// HttpServer on real loopback sockets with a fake handler (no Redis, no PostgreSQL): slow
// clients cost no worker, deadlines answer 408, pipelining and long keep-alive work, the
// connection limit answers 503, every HTTP-layer error is JSON, every answer carries Date
// and Cache-Control, CORS preflights, and stop() is prompt and still answers what it has.
#include "http/server.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <time.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "raw_http.h"

namespace bk::http {
namespace {

using namespace std::chrono_literals;
using test::RawAnswer;
using test::RawConnection;

// Generous: an answer that takes this long on a loaded 2-core machine is not coming.
constexpr auto kAnswerWithin = 5000ms;

// Echoes the path (JSON); /slow takes `slow_for`; /v1/cached is cacheable; /missing is 404.
struct FakeApp {
  std::chrono::milliseconds slow_for = 1000ms;
  std::atomic<int> served{0};
  std::atomic<int> slow_started{0};

  HttpServer::Handler handler() {
    return [this](const HttpServer::Request& r) {
      ++served;
      if (r.path == "/slow") {
        ++slow_started;
        std::this_thread::sleep_for(slow_for);
      }
      HttpServer::Response out;
      out.status = r.path == "/missing" ? 404 : 200;
      out.body = nlohmann::json{{"path", r.path},
                                {"method", r.method},
                                {"body", r.body},
                                {"idempotency_key", r.idempotency_key},
                                {"content_type", r.content_type}}
                     .dump();
      out.cacheable = r.path == "/v1/cached";
      if (r.path == "/v1/retry") out.headers.emplace_back("Retry-After", "1");
      return out;
    };
  }
};

HttpServer::Options options_with(std::size_t workers = 32) {
  HttpServer::Options o;
  o.workers = workers;
  o.inline_paths = {"/healthz"};
  o.post = true;
  o.max_body = 1024;
  return o;
}

int port_of(const HttpServer& server) {
  return std::stoi(server.address().substr(server.address().rfind(':') + 1));
}

std::string get(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: test\r\n" + extra + "\r\n";
}

// An IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110), read back whole.
bool is_http_date(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return text.size() == 29 && end != nullptr && *end == '\0';
}

// The body is {"error": "<text>"} and the content type says JSON.
void expect_json_error(const RawAnswer& a, int status) {
  EXPECT_EQ(a.status, status) << a.head;
  EXPECT_EQ(a.header("content-type"), "application/json") << a.head;
  const auto body = nlohmann::json::parse(a.body, nullptr, false);
  ASSERT_TRUE(body.is_object() && body.contains("error") && body["error"].is_string())
      << status << ": " << a.body;
  EXPECT_FALSE(body["error"].get<std::string>().empty());
}

// Clients that each send one byte of a request head every ~200 ms, never finishing it,
// until told to stop (or for at most `for_at_most`).
class Tricklers {
 public:
  Tricklers(int port, int count, std::chrono::milliseconds for_at_most) {
    // One every 20 ms: a server with a short listen backlog (the old one's was 5) would
    // otherwise take some of them in only seconds later, when the kernel resends its SYN-ACK.
    for (int i = 0; i < count; ++i) {
      clients_.emplace_back(std::make_unique<RawConnection>(port));
      std::this_thread::sleep_for(20ms);
    }
    thread_ = std::thread([this, for_at_most] {
      const std::string head = "GET /healthz HTTP/1.1\r\nHost: test\r\nX-Slow: ";
      const auto until = std::chrono::steady_clock::now() + for_at_most;
      for (std::size_t i = 0; !stop_ && std::chrono::steady_clock::now() < until; ++i) {
        for (auto& c : clients_) c->send(std::string(1, i < head.size() ? head[i] : 'a'));
        std::this_thread::sleep_for(200ms);
      }
    });
  }
  ~Tricklers() { finish(); }
  Tricklers(const Tricklers&) = delete;
  Tricklers& operator=(const Tricklers&) = delete;
  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::size_t connected() const {
    std::size_t n = 0;
    for (const auto& c : clients_) n += c->connected() ? 1 : 0;
    return n;
  }

 private:
  std::vector<std::unique_ptr<RawConnection>> clients_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// 50 slow clients, more than the 32 workers: a probe (inline) and a read (a worker's) from
// another client are answered while they trickle. The old server (a thread per client)
// answered neither until the slow clients gave up.
TEST(HttpServer, FiftySlowClientsDoNotHoldUpProbesOrReads) {
  FakeApp app;
  HttpServer server("127.0.0.1:0", app.handler(), options_with(32));
  const int port = port_of(server);
  Tricklers slow(port, 50, 15s);
  ASSERT_EQ(slow.connected(), 50U);
  std::this_thread::sleep_for(600ms);  // all accepted, each a few bytes into its head
  for (int i = 0; i < 3; ++i) {
    const auto probe = test::raw_exchange(port, get("/healthz"), kAnswerWithin);
    ASSERT_TRUE(probe) << "probe " << i << " not answered while 50 clients trickle";
    EXPECT_EQ(probe->status, 200);
    const auto read = test::raw_exchange(port, get("/v1/top"), kAnswerWithin);
    ASSERT_TRUE(read) << "read " << i << " not answered while 50 clients trickle";
    EXPECT_EQ(read->status, 200);
  }
}

TEST(HttpServer, AHeadOrBodyThatDoesNotArriveInTimeGetsA408InJson) {
  FakeApp app;
  HttpServer::Options o = options_with();
  o.header_timeout = 500ms;
  o.body_timeout = 500ms;
  HttpServer server("127.0.0.1:0", app.handler(), o);
  RawConnection head(port_of(server));
  head.send("GET /healthz HTTP/1.1\r\nHost: test\r\n");  // no blank line: the head never ends
  const auto late_head = head.answer(kAnswerWithin);
  ASSERT_TRUE(late_head) << "no answer to a head that never ended";
  expect_json_error(*late_head, 408);
  EXPECT_TRUE(head.closed_within(kAnswerWithin));

  RawConnection body(port_of(server));
  body.send("POST /v1/members HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\n{\"ids");
  const auto late_body = body.answer(kAnswerWithin);
  ASSERT_TRUE(late_body) << "no answer to a body that never ended";
  expect_json_error(*late_body, 408);
  EXPECT_TRUE(body.closed_within(kAnswerWithin));
  EXPECT_EQ(app.served.load(), 0);
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  FakeApp app;
  HttpServer server("127.0.0.1:0", app.handler(), options_with());
  RawConnection c(port_of(server));
  // One write: a read (a worker's), a probe (inline), another read.
  c.send(get("/v1/first") + get("/healthz") + get("/v1/third"));
  for (const char* path : {"/v1/first", "/healthz", "/v1/third"}) {
    const auto a = c.answer(kAnswerWithin);
    ASSERT_TRUE(a) << "no answer for " << path;
    EXPECT_EQ(a->status, 200);
    EXPECT_EQ(nlohmann::json::parse(a->body)["path"], path);
  }
}

TEST(HttpServer, TenThousandRequestsShareOneKeepAliveConnection) {
  FakeApp app;
  HttpServer server("127.0.0.1:0", app.handler(), options_with(4));
  RawConnection c(port_of(server));
  for (int i = 0; i < 10000; ++i) {
    const std::string path = i % 2 == 0 ? "/healthz" : "/v1/n" + std::to_string(i);
    ASSERT_TRUE(c.send(get(path))) << "the server closed the connection before request " << i;
    const auto a = c.answer(kAnswerWithin);
    ASSERT_TRUE(a) << "no answer to request " << i << " on the same connection";
    ASSERT_EQ(a->status, 200) << i;
    ASSERT_EQ(a->header("connection").find("close"), std::string::npos) << i << ": " << a->head;
  }
  EXPECT_EQ(app.served.load(), 10000);
}

TEST(HttpServer, ConnectionsBeyondTheLimitGetA503InJson) {
  FakeApp app;
  app.slow_for = 3000ms;
  HttpServer::Options o = options_with();
  o.max_connections = 8;
  HttpServer server("127.0.0.1:0", app.handler(), o);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 8; ++i) {  // every slot with a request in progress
    held.push_back(std::make_unique<RawConnection>(port_of(server)));
    held.back()->send(get("/slow"));
  }
  for (int i = 0; i < 300 && app.slow_started.load() < 8; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(app.slow_started.load(), 8);
  RawConnection extra(port_of(server));
  extra.send(get("/healthz"));
  const auto refused = extra.answer(kAnswerWithin);
  ASSERT_TRUE(refused) << "no answer beyond the connection limit";
  expect_json_error(*refused, 503);
  EXPECT_TRUE(extra.closed_within(kAnswerWithin));
  // Their requests answered, the connections wait for more: a new connection is served.
  std::optional<RawAnswer> again;
  for (int i = 0; i < 400 && !(again && again->status == 200); ++i) {
    std::this_thread::sleep_for(20ms);
    again = test::raw_exchange(port_of(server), get("/healthz"), kAnswerWithin);
  }
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST(HttpServer, OneClientHoldingEverySlotWithSilentConnectionsCannotKeepOthersOut) {
  FakeApp app;
  HttpServer::Options o = options_with();
  o.max_connections = 8;
  HttpServer server("127.0.0.1:0", app.handler(), o);
  std::vector<std::unique_ptr<RawConnection>> silent;
  for (int i = 0; i < 8; ++i) {
    silent.push_back(std::make_unique<RawConnection>(port_of(server)));
    std::this_thread::sleep_for(20ms);  // in order: the first is the one that waited longest
  }
  silent[3]->send("GET /healthz HTTP/1.1\r\n");           // half a head, trickling
  std::vector<std::unique_ptr<RawConnection>> newcomers;  // kept open: each round needs a slot
  for (int round = 0; round < 3; ++round) {
    newcomers.push_back(std::make_unique<RawConnection>(port_of(server)));
    newcomers.back()->send(get("/healthz"));
    const auto a = newcomers.back()->answer(kAnswerWithin);
    ASSERT_TRUE(a) << "no answer with every slot held, round " << round;
    EXPECT_EQ(a->status, 200) << a->body;
    EXPECT_TRUE(silent[static_cast<std::size_t>(round)]->closed_within(kAnswerWithin))
        << "the connection that waited longest makes room, round " << round;
  }
}

TEST(HttpServer, HttpLayerErrorsAreJson) {
  FakeApp app;
  HttpServer server("127.0.0.1:0", app.handler(), options_with());
  const int port = port_of(server);
  const auto exchange = [&](const std::string& request) {
    auto a = test::raw_exchange(port, request, kAnswerWithin);
    return a ? *a : RawAnswer{};
  };
  expect_json_error(exchange("garbage\r\n\r\n"), 400);
  const RawAnswer put = exchange("PUT /v1/x HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n");
  expect_json_error(put, 405);
  EXPECT_NE(put.header("allow").find("GET"), std::string::npos) << put.head;
  EXPECT_NE(put.header("allow").find("POST"), std::string::npos) << put.head;
  expect_json_error(exchange("POST /v1/members HTTP/1.1\r\nHost: test\r\nContent-Length: 1025\r\n"
                             "\r\n" +
                             std::string(1025, 'x')),
                    413);
  expect_json_error(exchange(get("/v1/" + std::string(9000, 'a'))), 414);
  std::string headers;
  for (int i = 0; i < 200; ++i)
    headers += "X-Filler-" + std::to_string(i) + ": " + std::string(90, 'h') + "\r\n";
  expect_json_error(exchange(get("/healthz", headers)), 431);
  EXPECT_EQ(app.served.load(), 0);
}

// Found by an attacker's pass: one header of 30 KB is a 431 (the line is short: not a 414);
// a transfer coding other than chunked alone is a 501, never read as plain; two
// Authorization headers are a 400, not the first one taken; and every answer says
// X-Content-Type-Options: nosniff.
TEST(HttpServer, HeadsAnAttackerMightSendAreRefusedForWhatTheyAre) {
  FakeApp app;
  HttpServer server("127.0.0.1:0", app.handler(), options_with());
  const auto exchange = [&](const std::string& request) {
    auto a = test::raw_exchange(port_of(server), request, kAnswerWithin);
    return a ? *a : RawAnswer{};
  };
  expect_json_error(exchange(get("/healthz", "X-Big: " + std::string(30 * 1024, 'h') + "\r\n")),
                    431);
  const std::string chunk = "2\r\n{}\r\n0\r\n\r\n";
  for (const char* coding : {"gzip, chunked", "chunked, chunked", "identity, chunked"}) {
    expect_json_error(exchange("POST /v1/b HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: " +
                               std::string(coding) + "\r\n\r\n" + chunk),
                      501);
  }
  expect_json_error(exchange("POST /v1/b HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n" +
                             chunk),
                    501);
  const RawAnswer chunked =
      exchange("POST /v1/b HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: Chunked\r\n\r\n" + chunk);
  EXPECT_EQ(chunked.status, 200) << chunked.head;
  expect_json_error(
      exchange(get("/v1/b", "Authorization: Bearer one\r\nAuthorization: Bearer two\r\n")), 400);
  EXPECT_EQ(app.served.load(), 1) << "only the plain chunked POST reached the handler";
  for (const std::string& request :
       {get("/v1/b"), get("/healthz"), get("/missing"), std::string("garbage\r\n\r\n")}) {
    EXPECT_EQ(exchange(request).header("x-content-type-options"), "nosniff") << request;
  }
}

// A write's Idempotency-Key and Content-Type reach the handler as sent; either twice in one
// request is a 400 (which one would count?), as for Authorization.
TEST(HttpServer, IdempotencyKeyAndContentTypeReachTheHandlerOnceEach) {
  FakeApp app;
  HttpServer server("127.0.0.1:0", app.handler(), options_with());
  const auto exchange = [&](const std::string& request) {
    auto a = test::raw_exchange(port_of(server), request, kAnswerWithin);
    return a ? *a : RawAnswer{};
  };
  const RawAnswer sent = exchange(
      "POST /v1/b HTTP/1.1\r\nHost: test\r\nIdempotency-Key: \"k-1\"\r\n"
      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_EQ(sent.status, 200) << sent.head;
  const auto seen = nlohmann::json::parse(sent.body);
  EXPECT_EQ(seen["idempotency_key"], "\"k-1\"");
  EXPECT_EQ(seen["content_type"], "application/json");
  expect_json_error(exchange("POST /v1/b HTTP/1.1\r\nHost: test\r\nIdempotency-Key: a\r\n"
                             "Idempotency-Key: b\r\nContent-Length: 2\r\n\r\n{}"),
                    400);
  expect_json_error(exchange("POST /v1/b HTTP/1.1\r\nHost: test\r\nContent-Type: a/b\r\n"
                             "Content-Type: c/d\r\nContent-Length: 2\r\n\r\n{}"),
                    400);
  EXPECT_EQ(app.served.load(), 1);
}

TEST(HttpServer, PostIsA405WithAllowWhenNotEnabled) {
  FakeApp app;
  HttpServer::Options o = options_with();
  o.post = false;
  HttpServer server("127.0.0.1:0", app.handler(), o);
  const auto a = test::raw_exchange(
      port_of(server), "POST /v1/x HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}",
      kAnswerWithin);
  ASSERT_TRUE(a);
  expect_json_error(*a, 405);
  EXPECT_NE(a->header("allow").find("GET"), std::string::npos);
  EXPECT_EQ(a->header("allow").find("POST"), std::string::npos);
}

// serve's admin routes: PUT and DELETE when enabled, a PUT body bounded by max_write_body
// (Content-Length or chunked), a DELETE carrying no body.
TEST(HttpServer, PutAndDeleteWhenEnabledWithAPutBodyOfAtMostMaxWriteBody) {
  FakeApp app;
  HttpServer::Options o = options_with();
  o.put_delete = true;
  o.max_write_body = 64;
  HttpServer server("127.0.0.1:0", app.handler(), o);
  const auto exchange = [&](const std::string& request) {
    auto a = test::raw_exchange(port_of(server), request, kAnswerWithin);
    return a ? *a : RawAnswer{};
  };
  const RawAnswer put = exchange("PUT /v1/b HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(put.status, 200) << put.head;
  EXPECT_EQ(nlohmann::json::parse(put.body)["body"], "{}");
  EXPECT_EQ(nlohmann::json::parse(put.body)["method"], "PUT");
  const RawAnswer del = exchange("DELETE /v1/b HTTP/1.1\r\nHost: test\r\n\r\n");
  EXPECT_EQ(del.status, 200) << del.head;
  const int served = app.served.load();
  expect_json_error(exchange("PUT /v1/b HTTP/1.1\r\nHost: test\r\nContent-Length: 65\r\n\r\n" +
                             std::string(65, 'x')),
                    413);
  expect_json_error(exchange("PUT /v1/b HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n"
                             "\r\n41\r\n" +
                             std::string(65, 'x') + "\r\n0\r\n\r\n"),
                    413);
  expect_json_error(exchange("DELETE /v1/b HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}"),
                    400);
  EXPECT_EQ(app.served.load(), served) << "refused requests reach no handler";
  // A POST still takes max_body (1024), not max_write_body.
  const RawAnswer post = exchange(
      "POST /v1/b HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'));
  EXPECT_EQ(post.status, 200) << post.head;
  const RawAnswer other = exchange("PATCH /v1/b HTTP/1.1\r\nHost: test\r\n\r\n");
  expect_json_error(other, 405);
  EXPECT_EQ(other.header("allow"), "GET, HEAD, POST, PUT, DELETE, OPTIONS") << other.head;
}

TEST(HttpServer, EveryAnswerHasDateAndCacheControl) {
  FakeApp app;
  HttpServer::Options o = options_with();
  o.cache_max_age = std::chrono::seconds{30};
  HttpServer server("127.0.0.1:0", app.handler(), o);
  const int port = port_of(server);
  struct Case {
    std::string request;
    int status;
    std::string cache_control;
  };
  for (const Case& c : std::vector<Case>{
           {get("/healthz"), 200, "no-store"},
           {get("/v1/top"), 200, "no-store"},
           {get("/v1/cached"), 200, "max-age=30"},
           {"HEAD /v1/cached HTTP/1.1\r\nHost: test\r\n\r\n", 200, "max-age=30"},
           {get("/missing"), 404, "no-store"},
           {get("/v1/retry"), 200, "no-store"},
           {"BREW /pot HTTP/1.1\r\nHost: test\r\n\r\n", 405, "no-store"},
           {"garbage\r\n\r\n", 400, "no-store"},
       }) {
    RawConnection conn(port);
    conn.send(c.request);
    const auto a = conn.answer(kAnswerWithin, c.request.rfind("HEAD", 0) == 0);
    ASSERT_TRUE(a) << c.request;
    EXPECT_EQ(a->status, c.status) << c.request;
    EXPECT_TRUE(is_http_date(a->header("date"))) << c.request << a->head;
    EXPECT_EQ(a->header("cache-control"), c.cache_control) << c.request << a->head;
    if (c.request.find("/v1/retry") != std::string::npos) {
      EXPECT_EQ(a->header("retry-after"), "1") << a->head;  // the handler's own header
    }
  }
  // HEAD: the length GET would have, no body.
  RawConnection head(port);
  head.send("HEAD /v1/cached HTTP/1.1\r\nHost: test\r\n\r\n" + get("/healthz"));
  const auto h = head.answer(kAnswerWithin, true);
  ASSERT_TRUE(h);
  EXPECT_GT(std::stoul(h->header("content-length")), 0U);
  const auto after = head.answer(kAnswerWithin);  // the next answer starts right after the head
  ASSERT_TRUE(after);
  EXPECT_EQ(nlohmann::json::parse(after->body)["path"], "/healthz");
}

TEST(HttpServer, CorsPreflightsFromListedOriginsOnly) {
  FakeApp app;
  HttpServer::Options o = options_with();
  o.cors_origins = {"https://app.example"};
  HttpServer server("127.0.0.1:0", app.handler(), o);
  const int port = port_of(server);
  const auto preflight = [&](const std::string& origin) {
    return test::raw_exchange(
        port,
        "OPTIONS /v1/boards/b/daily/top HTTP/1.1\r\nHost: test\r\nOrigin: " + origin +
            "\r\nAccess-Control-Request-Method: GET\r\n"
            "Access-Control-Request-Headers: authorization\r\n\r\n",
        kAnswerWithin);
  };
  const auto allowed = preflight("https://app.example");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 204) << allowed->head;
  EXPECT_EQ(allowed->header("access-control-allow-origin"), "https://app.example");
  EXPECT_NE(allowed->header("access-control-allow-methods").find("GET"), std::string::npos);
  EXPECT_NE(allowed->header("access-control-allow-headers").find("Authorization"),
            std::string::npos);
  EXPECT_FALSE(allowed->header("access-control-max-age").empty());
  EXPECT_NE(allowed->header("vary").find("Origin"), std::string::npos);
  const auto refused = preflight("https://evil.example");
  ASSERT_TRUE(refused);
  expect_json_error(*refused, 403);
  EXPECT_EQ(refused->header("access-control-allow-origin"), "");
  // A simple request: the listed origin is named, another is not.
  const auto listed =
      test::raw_exchange(port, get("/v1/top", "Origin: https://app.example\r\n"), kAnswerWithin);
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->header("access-control-allow-origin"), "https://app.example");
  EXPECT_NE(listed->header("vary").find("Origin"), std::string::npos);
  const auto other =
      test::raw_exchange(port, get("/v1/top", "Origin: https://evil.example\r\n"), kAnswerWithin);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200);
  EXPECT_EQ(other->header("access-control-allow-origin"), "");
}

// stop() with idle, slow and half-sent clients connected and a request in a worker: the
// request is answered, the others are closed, and stop() returns within 5 s.
TEST(HttpServer, StopIsPromptAndAnswersTheRequestInProgress) {
  FakeApp app;
  app.slow_for = 1000ms;
  auto server = std::make_unique<HttpServer>("127.0.0.1:0", app.handler(), options_with(32));
  const int port = port_of(*server);
  RawConnection idle(port);
  RawConnection kept(port);  // keep-alive, between requests
  kept.send(get("/healthz"));
  ASSERT_TRUE(kept.answer(kAnswerWithin));
  RawConnection half(port);
  half.send("GET /v1/top HTTP/1.1\r\nHo");
  Tricklers slow(port, 5, 20s);
  RawConnection busy(port);
  busy.send(get("/slow"));
  for (int i = 0; i < 500 && app.slow_started.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(app.slow_started.load(), 1);  // the slow request is in a worker

  const auto started = std::chrono::steady_clock::now();
  server->stop();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  EXPECT_LT(took.count(), 5000) << "stop() took " << took.count() << " ms";
  const auto answered = busy.answer(kAnswerWithin);
  ASSERT_TRUE(answered) << "the request in progress was not answered";
  EXPECT_EQ(answered->status, 200);
  EXPECT_TRUE(idle.closed_within(kAnswerWithin));
  EXPECT_TRUE(kept.closed_within(kAnswerWithin));
  EXPECT_TRUE(half.closed_within(kAnswerWithin));
  slow.finish();
  server.reset();
  EXPECT_FALSE(RawConnection(port).connected());  // nobody listens any more
}

}  // namespace
}  // namespace bk::http
