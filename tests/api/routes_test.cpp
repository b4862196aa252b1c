// The route table (api/routes.h): what a path and method resolve to, before any body is
// read and for dispatch alike. Pure: no server.
#include "api/routes.h"

#include <gtest/gtest.h>

#include <string>

namespace bk::api {
namespace {

const std::string kPeriod = "/v1/boards/pts/daily";

TEST(RoutesTest, EachPathAndMethodNamesOneRouteAndItsAccess) {
  struct Case {
    const char* method;
    std::string path;
    RouteId id;
    Access access;
  };
  const Case cases[] = {
      {"GET", "/v1/boards", RouteId::boards, Access::read},
      {"GET", "/v1/boards/pts/periods", RouteId::periods, Access::read},
      {"GET", "/v1/boards/pts/bans", RouteId::bans, Access::admin},
      {"PUT", "/v1/boards/pts/bans/m1", RouteId::ban, Access::admin},
      {"DELETE", "/v1/boards/pts/bans/m1", RouteId::unban, Access::admin},
      {"HEAD", kPeriod + "/top", RouteId::top, Access::read},
      {"GET", kPeriod + "/history", RouteId::history, Access::read},
      {"GET", kPeriod + "/members", RouteId::members, Access::read},
      {"POST", kPeriod + "/members", RouteId::members_post, Access::read},
      {"GET", kPeriod + "/members/m1", RouteId::member, Access::read},
      {"DELETE", kPeriod + "/members/m1", RouteId::remove, Access::admin},
      {"GET", kPeriod + "/members/m1/around", RouteId::around, Access::read},
      {"POST", "/v1/boards/pts/members/m1/scores", RouteId::score, Access::write},
  };
  for (const Case& c : cases) {
    const Matched m = match_route(c.method, c.path);
    ASSERT_NE(m.route, nullptr) << c.method << " " << c.path;
    EXPECT_EQ(m.route->id, c.id) << c.method << " " << c.path;
    EXPECT_EQ(m.access, c.access) << c.method << " " << c.path;
  }
}

// The list of boards is a route of the table like the others: /v1/boards itself, no board.
TEST(RoutesTest, TheListOfBoardsIsV1BoardsItselfAndNamesNoBoard) {
  Matched m = match_route("GET", "/v1/boards");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->id, RouteId::boards);
  EXPECT_FALSE(m.names_board);
  EXPECT_EQ(m.board, "");
  EXPECT_EQ(lane_of("GET", "/v1/boards?limit=5"), Lane::redis);
  m = match_route("POST", "/v1/boards");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_EQ(m.allow, "GET, HEAD");
  m = match_route("GET", "/v1/boards/pts/periods");
  EXPECT_TRUE(m.names_board);
  EXPECT_EQ(m.board, "pts");
  // An empty board segment is still a board (the route answers 400 for its name).
  m = match_route("GET", "/v1/boards//periods");
  ASSERT_NE(m.route, nullptr);
  EXPECT_TRUE(m.names_board);
  EXPECT_EQ(m.board, "");
}

TEST(RoutesTest, AMethodThePathDoesNotTakeNamesTheOnesItDoes) {
  Matched m = match_route("POST", kPeriod + "/top");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_EQ(m.allow, "GET, HEAD");
  m = match_route("PUT", kPeriod + "/members/m1");
  EXPECT_EQ(m.allow, "GET, HEAD, DELETE");
  EXPECT_EQ(m.access, Access::read);  // a read route is among the path's
  m = match_route("GET", "/v1/boards/pts/bans/m1");
  EXPECT_EQ(m.allow, "PUT, DELETE");
  EXPECT_EQ(m.access, Access::admin);  // every route of the path is an admin route
  const HttpError e = method_not_allowed("POST", "GET, HEAD");
  EXPECT_EQ(e.status, 405);
  ASSERT_EQ(e.headers.size(), 1U);
  EXPECT_EQ(e.headers[0], (std::pair<std::string, std::string>{"Allow", "GET, HEAD"}));
}

TEST(RoutesTest, UnknownPathsMatchNothingAndLiteralsAreComparedDecoded) {
  for (const std::string& path :
       {std::string("/v1"), std::string("/v1/"), std::string("/v1/boards/"),
        std::string("/v1/boards/pts"), kPeriod, kPeriod + "/nope", kPeriod + "/members/m1/x/y",
        std::string("/v2/boards/pts/daily/top"), std::string("/v2/boards")}) {
    const Matched m = match_route("GET", path);
    EXPECT_TRUE(m.allow.empty()) << path;
    EXPECT_EQ(m.route, nullptr) << path;
  }
  // "%62ans" is "bans": never a period of that name.
  const Matched m = match_route("GET", "/v1/boards/pts/%62ans");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->id, RouteId::bans);
  const std::string path = kPeriod + "/%74op";  // the match's views point into it
  const Matched top = match_route("GET", path);
  ASSERT_NE(top.route, nullptr);
  EXPECT_EQ(top.route->id, RouteId::top);
  EXPECT_EQ(top.board, "pts");
  EXPECT_EQ(top.period, "daily");
}

}  // namespace
}  // namespace bk::api
