// The serve section's keys for what clients may hold at once and for the probes' own
// listener: parsed, defaulted (the shares from the wholes they are a part of), and refused
// with the file, line and column of what cannot work.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "config_testing.h"

namespace bk {
namespace {

using config_testing::HasProblem;
using config_testing::minimal;
using config_testing::parse;
using config_testing::problems_of;

TEST(ConfigServeTest, SharesAndTheProbeListenerParse) {
  const Config c = parse(
      "serve:\n  max_connections: 100\n  bodies_in_flight_mb: 8\n"
      "  bodies_in_flight_per_token_mb: 3\n  requests_in_progress_per_token: 10\n"
      "  probe_listen: 0.0.0.0:8081\n" +
      minimal());
  EXPECT_EQ(c.serve.bodies_in_flight_mb, 8);
  EXPECT_EQ(c.serve.body_share_mb(), 3);
  EXPECT_EQ(c.serve.request_share(), 10);
  EXPECT_EQ(c.serve.probe_listen, "0.0.0.0:8081");
}

TEST(ConfigServeTest, UnsetSharesAreAQuarterOfTheirWholeAndNoProbeListener) {
  const Config d = parse(minimal());
  EXPECT_EQ(d.serve.bodies_in_flight_mb, 64);
  EXPECT_EQ(d.serve.body_share_mb(), 16);
  EXPECT_EQ(d.serve.request_share(), 1024);
  EXPECT_EQ(d.serve.probe_listen, "");
  const Config small = parse(
      "serve:\n  max_connections: 3\n  bodies_in_flight_mb: 2\n  probe_listen: ''\n" + minimal());
  EXPECT_EQ(small.serve.body_share_mb(), 1);  // at least 1
  EXPECT_EQ(small.serve.request_share(), 1);
  EXPECT_EQ(small.serve.probe_listen, "");
  EXPECT_EQ(parse("serve:\n  max_connections: 40\n" + minimal()).serve.request_share(), 10);
}

TEST(ConfigServeTest, SharesAndTheProbeListenerRefuseWhatCannotWork) {
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  bodies_in_flight_mb: 0\n" + minimal()), 2, 24,
                         "serve.bodies_in_flight_mb must be in [1, 1048576] (MiB), not 0"));
  EXPECT_TRUE(HasProblem(
      problems_of("serve:\n  bodies_in_flight_mb: 8\n  bodies_in_flight_per_token_mb: 9\n" +
                  minimal()),
      3, 34, "serve.bodies_in_flight_per_token_mb must be in [1, 8] (MiB, at most"));
  EXPECT_TRUE(
      HasProblem(problems_of("serve:\n  bodies_in_flight_per_token_mb: 65\n" + minimal()), 2, 34,
                 "serve.bodies_in_flight_per_token_mb must be in [1, 64]"));  // the default whole
  EXPECT_TRUE(HasProblem(
      problems_of("serve:\n  max_connections: 10\n  requests_in_progress_per_token: 11\n" +
                  minimal()),
      3, 35, "serve.requests_in_progress_per_token must be in [1, 10] (at most"));
  EXPECT_TRUE(
      HasProblem(problems_of("serve:\n  requests_in_progress_per_token: many\n" + minimal()), 2, 35,
                 "serve.requests_in_progress_per_token"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  probe_listen: localhost\n" + minimal()), 2, 17,
                         "serve.probe_listen must be HOST:PORT"));
}

}  // namespace
}  // namespace bk
