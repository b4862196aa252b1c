// Whose share of bodies and requests in progress a request of serve takes (http/front.h
// share_key): a token's identity, never the token (a secret would otherwise sit in the
// server's map as long as the request), and the client's address when the route needs no
// token or the token is not ours. No server.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/tokens.h"
#include "http/front.h"

namespace bk::http {
namespace {

HttpServer::Request head(const std::string& method, const std::string& target,
                         const std::string& token) {
  HttpServer::Request r;
  r.method = method;
  r.target = target;
  r.path = target.substr(0, target.find('?'));
  r.authorization = token.empty() ? "" : "Bearer " + token;
  r.peer = "192.0.2.7";
  return r;
}

api::Api api_with(std::vector<std::string> read) {
  return api::Api(std::move(read), [] { return std::string(32, 'k'); }, {"admin-secret-1"},
                  {api::WriteToken{"writer-secret-2", {}}});
}

const std::string kScores = "/v1/boards/pts/members/ann/scores";
const std::string kTop = "/v1/boards/pts/daily/top";

TEST(ShareKeyTest, ATokensShareIsKeyedByItsIdentityNeverByTheToken) {
  const api::Api api = api_with({"reader-secret-3"});
  for (const auto& [method, target, token] :
       std::vector<std::array<std::string, 3>>{{"POST", kScores, "writer-secret-2"},
                                               {"GET", kTop, "reader-secret-3"},
                                               {"GET", "/v1/boards/pts/bans", "admin-secret-1"}}) {
    const std::string key = share_key(api, head(method, target, token));
    EXPECT_EQ(key.find(token), std::string::npos) << key;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(api::token_id(token)));
    EXPECT_EQ(key, "token " + std::string(hex)) << "the identity rate limits count by";
  }
  EXPECT_EQ(share_key(api, head("POST", kScores, "writer-secret-2")),
            share_key(api, head("POST", "/v1/events", "writer-secret-2")))
      << "one token, one share, whatever the route";
  EXPECT_NE(share_key(api, head("GET", kTop, "reader-secret-3")),
            share_key(api, head("POST", kScores, "writer-secret-2")));
}

TEST(ShareKeyTest, RequestsWithoutATokenOfOursTakeTheClientsAddressShare) {
  const api::Api open = api_with({});
  EXPECT_EQ(share_key(open, head("GET", kTop, "")), "");
  EXPECT_EQ(share_key(open, head("GET", kTop, "made-up")), "")
      << "a made-up token buys no share of its own on an open API";
  EXPECT_EQ(share_key(open, head("GET", "/healthz", "writer-secret-2")), "");
  const api::Api closed = api_with({"reader-secret-3"});
  EXPECT_EQ(share_key(closed, head("POST", kScores, "not-ours")), "");
}

}  // namespace
}  // namespace bk::http
