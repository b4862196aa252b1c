// service::Reads without servers: what a read of a period that cannot be read raises (and so
// its HTTP status and CLI exit code) is decided before Redis or PostgreSQL is asked. The
// Redis connection here is never connected and the archive fails the test if it is asked.
#include "service/reads.h"

#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "redis/url.h"
#include "server_free_config.h"
#include "service/leaderboards.h"

namespace bk::service {
namespace {

const char* kBoards = R"(  - name: pts
    periods: [daily, {name: cup, cron: "0 18 * * 5"}]
    max_points: 1000
    retention: {default: 30d}
)";

class ReadsTest : public ::testing::Test {
 protected:
  Config config = testing::server_free_config(kBoards);
  redis::Connection redis{redis::parse_url(config.redis.url), redis::Connect::later};
  Leaderboards live{config, redis, Clock(*parse_rfc3339("2026-11-20T12:00:00Z"))};
  Reads& reads = live.reads();

  void SetUp() override {
    reads.read_history_from([]() -> cold::History& {
      ADD_FAILURE() << "the archive was asked";
      throw UnavailableError("no archive in this test");
    });
  }

  // The exception a call throws, by its exit code and whether it is a 404 (NotFoundError).
  template <class F>
  static std::pair<int, bool> thrown(F&& f) {
    try {
      f();
    } catch (const NotFoundError& e) {
      return {static_cast<int>(e.exit_code()), true};
    } catch (const Error& e) {
      return {static_cast<int>(e.exit_code()), false};
    }
    ADD_FAILURE() << "nothing thrown";
    return {0, false};
  }
};

TEST_F(ReadsTest, APeriodThatHasNotBegunIsNotFoundAndExitCodeOne) {
  EXPECT_EQ(thrown([&] { reads.locate("pts", "daily", "2026-11-21"); }),
            (std::pair<int, bool>{1, true}));
  EXPECT_EQ(thrown([&] { reads.locate("pts", "cup", "2026-11-20T18:00"); }),
            (std::pair<int, bool>{1, true}));
}

TEST_F(ReadsTest, MalformedOrUnknownNamesStayUsageErrors) {
  // A malformed id: 400 / exit 2; an unknown board or period: 404 / exit 2.
  EXPECT_EQ(thrown([&] { reads.locate("pts", "daily", "2026-11-32"); }),
            (std::pair<int, bool>{2, false}));
  EXPECT_EQ(thrown([&] { reads.locate("nope", "daily", std::nullopt); }),
            (std::pair<int, bool>{2, true}));
  EXPECT_EQ(thrown([&] { reads.locate("pts", "weekly", std::nullopt); }),
            (std::pair<int, bool>{2, true}));
}

TEST_F(ReadsTest, TheCurrentPeriodIsLocatedWithoutAnyServer) {
  const PeriodView view = reads.locate("pts", "daily", std::nullopt);
  EXPECT_EQ(view.state, PeriodState::open);
  EXPECT_EQ(view.ref.period.id, "2026-11-20");
  EXPECT_EQ(reads.locate("pts", "daily", "2026-11-20").ref.period.id, "2026-11-20");
}

TEST_F(ReadsTest, TheArchivedListingChecksItsCursorBeforeAskingTheArchive) {
  EXPECT_EQ(thrown([&] { reads.archived("pts", "daily", "not-a-day", 20); }),
            (std::pair<int, bool>{2, false}));
  EXPECT_EQ(thrown([&] { reads.archived("pts", "cup", "2026-11-20", 20); }),
            (std::pair<int, bool>{2, false}));
  EXPECT_EQ(thrown([&] { reads.archived("pts", "monthly", std::nullopt, 20); }),
            (std::pair<int, bool>{2, true}));
  EXPECT_EQ(thrown([&] { reads.archived("nope", "daily", std::nullopt, 20); }),
            (std::pair<int, bool>{2, true}));
}

}  // namespace
}  // namespace bk::service
