// Config durations: "<n>ms|s|m|h|d|w", nothing else, no overflow; shortest exact text back.
#include "core/duration.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace bk {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration("250ms"), Millis{250});
  EXPECT_EQ(parse_duration("90s"), seconds{90});
  EXPECT_EQ(parse_duration("5m"), minutes{5});
  EXPECT_EQ(parse_duration("10m"), minutes{10});
  EXPECT_EQ(parse_duration("36h"), hours{36});
  EXPECT_EQ(parse_duration("2d"), hours{48});
  EXPECT_EQ(parse_duration("8d"), hours{24 * 8});
  EXPECT_EQ(parse_duration("1w"), hours{24 * 7});
  EXPECT_EQ(parse_duration("0s"), Millis{0});
  EXPECT_EQ(parse_duration("007m"), minutes{7});
  EXPECT_EQ(parse_duration("999999999999999ms"), Millis{999999999999999});
}

TEST(ParseDuration, RejectsEverythingElse) {
  for (const char* bad : {"",
                          "s",
                          "m",
                          "5",
                          "5x",
                          "5 m",
                          " 5m",
                          "5m ",
                          "-5m",
                          "+5m",
                          "1.5h",
                          "5M",
                          "5H",
                          "5mss",
                          "5sm",
                          "1h30m",
                          "5min",
                          "5sec",
                          "1y",
                          "0x10s",
                          "5\n",
                          "9999999999999999ms",
                          "999999999999999w",
                          "99999999999999d"}) {
    EXPECT_EQ(parse_duration(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(FormatDuration, ShortestExactText) {
  EXPECT_EQ(format_duration(Millis{90000}), "90s");
  EXPECT_EQ(format_duration(Millis{172800000}), "2d");
  EXPECT_EQ(format_duration(hours{24 * 7}), "1w");
  EXPECT_EQ(format_duration(hours{24 * 14}), "2w");
  EXPECT_EQ(format_duration(hours{24 * 8}), "8d");
  EXPECT_EQ(format_duration(hours{1}), "1h");
  EXPECT_EQ(format_duration(hours{27}), "27h");
  EXPECT_EQ(format_duration(minutes{90}), "90m");
  EXPECT_EQ(format_duration(Millis{1500}), "1500ms");
  EXPECT_EQ(format_duration(Millis{1}), "1ms");
  EXPECT_EQ(format_duration(Millis{0}), "0ms");
}

TEST(FormatDuration, RoundTripsThroughParse) {
  std::mt19937_64 rng(7);
  const std::int64_t factors[] = {1, 1000, 60000, 3600000, 86400000, 604800000};
  for (int i = 0; i < 5000; ++i) {
    const std::int64_t factor = factors[static_cast<std::size_t>(i) % 6];
    const Millis d{std::uniform_int_distribution<std::int64_t>(0, 100000)(rng) * factor};
    const std::string text = format_duration(d);
    EXPECT_EQ(parse_duration(text), d) << text;
  }
}

}  // namespace
}  // namespace bk
