// What HttpServer lets clients hold at once, on loopback sockets with a fake handler: bodies
// are counted from their declared length (a chunked one from its bound) and refused before
// they are read (429 for a client over its share, 503 when all together are at the budget),
// requests in progress per client are bounded, and beyond max_connections a probe is still
// answered while anything else gets a 503.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "raw_http.h"

namespace bk::http {
namespace {

using namespace std::chrono_literals;
using test::RawConnection;

constexpr auto kAnswerWithin = 5000ms;

// 200 with the body's size; /slow waits until `release` is set.
struct App {
  std::atomic<bool> release{false};
  std::atomic<int> slow_started{0};
  HttpServer::Handler handler() {
    return [this](const HttpServer::Request& r) {
      if (r.path == "/slow") {
        ++slow_started;
        for (int i = 0; i < 500 && !release.load(); ++i) std::this_thread::sleep_for(10ms);
      }
      return HttpServer::Response{200, "application/json",
                                  "{\"bytes\":" + std::to_string(r.body.size()) + "}"};
    };
  }
};

int port_of(const HttpServer& server) {
  return std::stoi(server.address().substr(server.address().rfind(':') + 1));
}

// A POST head of `key` (as its Authorization, the test's share key) declaring `length` bytes.
std::string post_head(const std::string& key, std::size_t length) {
  return "POST /v1/b HTTP/1.1\r\nHost: test\r\nAuthorization: " + key +
         "\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}
std::string chunked_head(const std::string& key) {
  return "POST /v1/b HTTP/1.1\r\nHost: test\r\nAuthorization: " + key +
         "\r\nTransfer-Encoding: chunked\r\n\r\n";
}

// A connection whose head was admitted (100 Continue) and that sent a byte of its body: it
// holds its share.
std::unique_ptr<RawConnection> holding(int port, const std::string& head) {
  auto c = std::make_unique<RawConnection>(port);
  const auto a = c->send_expecting_continue(head, kAnswerWithin);
  EXPECT_TRUE(a && a->status == 100) << head << (a ? a->head : " had no answer");
  c->send("x");
  return c;
}

// The answer to a head sent alone (no byte of its body): a refusal made before the body.
int refused_before_body(int port, const std::string& head, std::string* retry_after = nullptr) {
  RawConnection c(port);
  c.send(head);
  const auto a = c.answer(kAnswerWithin);
  if (a && retry_after != nullptr) *retry_after = a->header("retry-after");
  return a ? a->status : 0;
}

HttpServer::Options shares() {
  HttpServer::Options o;
  o.workers = 8;
  o.post = true;
  o.max_body = 65536;
  o.body_bytes_in_flight = 150000;
  o.body_bytes_per_key = 70000;
  o.requests_per_key = 4;
  o.share_key = [](const HttpServer::Request& head) { return head.authorization; };
  return o;
}

TEST(HttpServerShares, BodiesAreCountedFromTheirDeclaredLengthAndRefusedBeforeTheyAreRead) {
  App app;
  HttpServer server("127.0.0.1:0", app.handler(), shares());
  const int port = port_of(server);
  const auto a = holding(port, post_head("a", 40000));
  std::string retry;
  EXPECT_EQ(refused_before_body(port, post_head("a", 40000), &retry), 429);  // a's share: 70000
  EXPECT_EQ(retry, "1");
  auto b = holding(port, post_head("b", 60000));                         // 100000 in flight
  EXPECT_EQ(refused_before_body(port, chunked_head("c"), &retry), 503);  // its bound: 65536
  EXPECT_EQ(retry, "1");
  {  // exactly the budget, then answered: its bytes are given back
    RawConnection c(port);
    c.send(post_head("c", 50000) + std::string(50000, 'c'));
    const auto answer = c.answer(kAnswerWithin);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 200) << answer->body;
  }
  EXPECT_EQ(refused_before_body(port, chunked_head("c")), 503);
  EXPECT_EQ(
      refused_before_body(port, "GET /v1/top HTTP/1.1\r\nHost: t\r\nAuthorization: c\r\n\r\n"),
      200);   // no body: no bytes needed
  b.reset();  // a dropped request gives its bytes back too
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    if (i > 0) std::this_thread::sleep_for(20ms);
    const auto answer =
        test::raw_exchange(port, chunked_head("c") + "5\r\nhello\r\n0\r\n\r\n", kAnswerWithin);
    status = answer ? answer->status : 0;
  }
  EXPECT_EQ(status, 200) << "the dropped request's bytes are given back within moments";
}

TEST(HttpServerShares, AClientsRequestsInProgressAreBoundedWithOrWithoutBodies) {
  App app;
  HttpServer::Options o = shares();
  HttpServer server("127.0.0.1:0", app.handler(), o);
  const int port = port_of(server);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) held.push_back(holding(port, post_head("e", 10)));
  held.push_back(std::make_unique<RawConnection>(port));
  held.back()->send("GET /slow HTTP/1.1\r\nHost: t\r\nAuthorization: e\r\n\r\n");
  for (int i = 0; i < 300 && app.slow_started.load() < 1; ++i) std::this_thread::sleep_for(10ms);
  std::string retry;
  EXPECT_EQ(refused_before_body(port, "GET /v1/top HTTP/1.1\r\nHost: t\r\nAuthorization: e\r\n\r\n",
                                &retry),
            429);
  EXPECT_EQ(retry, "1");
  EXPECT_EQ(refused_before_body(port, post_head("e", 1)), 429);
  EXPECT_EQ(
      refused_before_body(port, "GET /v1/top HTTP/1.1\r\nHost: t\r\nAuthorization: f\r\n\r\n"),
      200);  // another client
  app.release = true;
  const auto answered = held.back()->answer(kAnswerWithin);  // answered: its place is free
  ASSERT_TRUE(answered);
  EXPECT_EQ(
      refused_before_body(port, "GET /v1/top HTTP/1.1\r\nHost: t\r\nAuthorization: e\r\n\r\n"),
      200);
}

TEST(HttpServerShares, BeyondTheConnectionLimitAProbeIsAnsweredAndAnythingElseGetsA503) {
  App app;
  HttpServer::Options o = shares();
  o.max_connections = 4;
  o.inline_paths = {"/healthz"};
  o.probe_paths = {"/healthz"};
  HttpServer server("127.0.0.1:0", app.handler(), o);
  const int port = port_of(server);
  std::vector<std::unique_ptr<RawConnection>> busy;  // every slot with a request in progress
  for (int i = 0; i < 4; ++i) {
    busy.push_back(std::make_unique<RawConnection>(port));
    busy.back()->send("GET /slow HTTP/1.1\r\nHost: t\r\nAuthorization: k" + std::to_string(i) +
                      "\r\n\r\n");
  }
  for (int i = 0; i < 300 && app.slow_started.load() < 4; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(app.slow_started.load(), 4);
  const auto probe = [&] {
    RawConnection c(port);
    c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    const auto a = c.answer(kAnswerWithin);
    EXPECT_TRUE(c.closed_within(kAnswerWithin)) << "a probe over the limit is closed after";
    return a ? a->status : 0;
  };
  EXPECT_EQ(probe(), 200);
  std::string retry;
  EXPECT_EQ(refused_before_body(port, "GET /v1/top HTTP/1.1\r\nHost: t\r\n\r\n", &retry), 503);
  EXPECT_EQ(retry, "1");
  EXPECT_EQ(refused_before_body(port, "POST /healthz HTTP/1.1\r\nHost: t\r\n\r\n"), 503);
  // Silent connections over the limit, more than are kept waiting for a head: the newest
  // takes the place of the oldest, so a probe's head is still read.
  std::vector<std::unique_ptr<RawConnection>> silent;
  for (int i = 0; i < 300; ++i) silent.push_back(std::make_unique<RawConnection>(port));
  EXPECT_EQ(probe(), 200);
  app.release = true;
}

}  // namespace
}  // namespace bk::http
