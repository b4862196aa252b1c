// The HTTP server's answer texts without a socket: the bytes of an answer (headers, caching,
// CORS, HEAD), OPTIONS' answer, and the seconds shown in messages.
#include "http/parts.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <future>

namespace bk::http::parts {
namespace {

// The answer without its Date line, which changes every second.
std::string without_date(std::string text) {
  const auto at = text.find("Date: ");
  if (at != std::string::npos) text.erase(at, text.find("\r\n", at) + 2 - at);
  return text;
}

TEST(HttpPartsTest, SerializeWritesStatusContentCachingAndTheHandlersSafeHeaders) {
  HttpServer::Options options;
  HttpServer::Response r;
  r.body = "{}\n";
  r.headers = {{"Retry-After", "2"}, {"X-Bad", "a\r\nInjected: 1"}};
  EXPECT_EQ(
      without_date(serialize(r, Exchange{}, false, options)),
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3\r\n"
      "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nRetry-After: 2\r\n\r\n{}\n");
  EXPECT_NE(serialize(r, Exchange{}, false, options).find("\r\nDate: "), std::string::npos);
}

TEST(HttpPartsTest, SerializeCachesOnlySuccessfulReadsAndOmitsTheBodyOfHead) {
  HttpServer::Options options;
  options.cache_max_age = std::chrono::seconds(30);
  HttpServer::Response r;
  r.body = "{}";
  r.cacheable = true;
  Exchange head;
  head.head = true;
  head.read = true;
  EXPECT_EQ(
      without_date(serialize(r, head, true, options)),
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
      "X-Content-Type-Options: nosniff\r\nCache-Control: max-age=30\r\nConnection: close\r\n\r\n");
  Exchange post;
  post.version = 10;
  EXPECT_EQ(without_date(serialize(r, post, false, options)),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: "
            "keep-alive\r\n\r\n{}");
  r.status = 204;
  EXPECT_EQ(without_date(serialize(r, head, false, options)),
            "HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: "
            "no-store\r\n\r\n");
}

TEST(HttpPartsTest, ChunkedAloneIsTheOnlyTransferCodingTaken) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(transfer_coding_status(V{"chunked"}), 0);
  EXPECT_EQ(transfer_coding_status(V{" Chunked "}), 0);
  EXPECT_EQ(transfer_coding_status(V{"chunked,"}), 0);  // an empty element is no coding
  EXPECT_EQ(transfer_coding_status(V{"gzip, chunked"}), 501);
  EXPECT_EQ(transfer_coding_status(V{"gzip", "chunked"}), 501);  // two fields, one list
  EXPECT_EQ(transfer_coding_status(V{"chunked, chunked"}), 501);
  EXPECT_EQ(transfer_coding_status(V{"chunked, gzip"}), 400);  // the body's end is unknown
  EXPECT_EQ(transfer_coding_status(V{"gzip"}), 400);
  EXPECT_EQ(transfer_coding_status(V{""}), 400);
  EXPECT_EQ(transfer_coding_status(V{"chunkedx"}), 400);
  EXPECT_EQ(transfer_coding_status(V{"chunked"}, 10), 400);         // HTTP/1.0: faulty framing
  EXPECT_EQ(transfer_coding_status(V{"chunked"}, 11, false), 400);  // the parser disagrees
}

TEST(HttpPartsTest, ARequestLineEndsWithinItsBoundOrNot) {
  EXPECT_TRUE(line_ends_within("GET / HTTP/1.1\r\nX-Big: aaaa", 16));
  EXPECT_FALSE(line_ends_within("GET /aaaaaaaaaaaaaaaa HTTP/1.1\r\n", 16));
  EXPECT_FALSE(line_ends_within("X-Big: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 16));
}

TEST(HttpPartsTest, CorsAnswersOnlyListedOrigins) {
  HttpServer::Options options;
  options.cors_origins = {"https://app.example.com"};
  Exchange x;
  x.origin = "https://app.example.com";
  EXPECT_TRUE(origin_allowed(options, x.origin));
  EXPECT_FALSE(origin_allowed(options, "https://evil.example.com"));
  EXPECT_FALSE(origin_allowed(options, ""));
  EXPECT_NE(serialize(HttpServer::Response{}, x, false, options)
                .find("Access-Control-Allow-Origin: https://app.example.com\r\nVary: Origin\r\n"),
            std::string::npos);
  const auto preflight = options_answer(x, options, "GET, HEAD, OPTIONS");
  EXPECT_EQ(preflight.status, 204);
  EXPECT_EQ(preflight.headers, (std::vector<std::pair<std::string, std::string>>{
                                   {"Access-Control-Allow-Methods", "GET, HEAD"},
                                   {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
                                   {"Access-Control-Max-Age", "600"},
                                   {"Allow", "GET, HEAD, OPTIONS"}}));
  x.origin = "https://evil.example.com";
  EXPECT_EQ(options_answer(x, options, "GET").status, 403);
  x.origin.clear();
  const auto plain = options_answer(x, options, "GET, HEAD, OPTIONS");
  EXPECT_EQ(plain.status, 204);
  EXPECT_EQ(plain.headers,
            (std::vector<std::pair<std::string, std::string>>{{"Allow", "GET, HEAD, OPTIONS"}}));
  options.cors_origins = {"*"};
  EXPECT_TRUE(origin_allowed(options, "https://any.example"));
}

TEST(HttpPartsTest, SecondsTextShowsTenthsOnlyWhenThereAreAny) {
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(4000)), "4");
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(500)), "0.5");
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(1250)), "1.2");
  EXPECT_EQ(json_error(413, "too big").body, "{\"error\":\"too big\"}\n");
  EXPECT_EQ(json_error(413, "too big").status, 413);
}

// A pool with a nice value runs its tasks at that lower CPU priority (serve's heavy lane), and
// one without at the process's own.
TEST(HttpPartsTest, AWorkerPoolsThreadsRunAtItsNiceValue) {
  const auto nice_of_task = [](int nice) {
    WorkerPool pool;
    pool.start(1, nice);
    std::promise<int> seen;
    pool.submit([&seen] {
      seen.set_value(getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))));
    });
    const int value = seen.get_future().get();
    pool.finish();
    return value;
  };
  const int own = getpriority(PRIO_PROCESS, 0);
  EXPECT_EQ(nice_of_task(0), own);
  EXPECT_EQ(nice_of_task(10), std::min(own + 10, 19)) << "10 more than the process's " << own;
}

}  // namespace
}  // namespace bk::http::parts
