// RFC 3339 parsing (strict) and formatting, and the fixed clock.
#include "core/time.h"

#include <date/date.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace bk {
namespace {

std::int64_t ms(const char* text) {
  const auto t = parse_rfc3339(text);
  return t ? to_epoch_ms(*t) : -999;
}

TEST(ParseRfc3339, ZoneOffsetsAndFractions) {
  EXPECT_EQ(ms("2026-11-22T14:03:00Z"), 1795356180000);
  EXPECT_EQ(ms("2026-11-22t14:03:00z"), 1795356180000);
  EXPECT_EQ(ms("2026-11-22 14:03:00Z"), 1795356180000);
  EXPECT_EQ(ms("2026-11-22T14:03:00+00:00"), 1795356180000);
  EXPECT_EQ(ms("2026-11-22T14:03:00-00:00"), 1795356180000);
  EXPECT_EQ(ms("2026-11-22T22:03:00+08:00"), 1795356180000);
  EXPECT_EQ(ms("2026-11-22T14:03:00.250+08:00"), 1795327380250);
  EXPECT_EQ(ms("2026-03-08T02:30:00-05:30"), 1772956800000);
  EXPECT_EQ(ms("1999-12-31T23:59:59+14:00"), 946634399000);
  EXPECT_EQ(ms("2000-02-29T23:59:59.999Z"), 951868799999);
  EXPECT_EQ(ms("2026-11-22T14:03:00.5Z"), 1795356180500);
  EXPECT_EQ(ms("2026-11-22T14:03:00.05Z"), 1795356180050);
  EXPECT_EQ(ms("2026-11-22T14:03:00.123456789Z"), 1795356180123);  // truncated to ms
  EXPECT_EQ(ms("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ms("1969-12-31T23:59:59.999Z"), -1);
}

TEST(ParseRfc3339, RejectsMalformed) {
  for (const char* bad : {
           "",
           "2026-11-22",
           "2026-11-22T14:03Z",
           "2026-11-22T14:03:00",
           "2026-11-22T14:03:00+08",
           "2026-11-22T14:03:00+0800",
           "2026-11-22T14:03:00+8:00",
           "2026-11-22T14:03:00+24:00",
           "2026-11-22T14:03:00+08:60",
           "2026-11-22T14:03:00.Z",
           "2026-11-22T14:03:00.12a4Z",
           "2026-11-22T14:03:00Zjunk",
           "2026-11-22T14:03:00Z ",
           " 2026-11-22T14:03:00Z",
           "2026-11-22X14:03:00Z",
           "2026/11/22T14:03:00Z",
           "2026-13-01T00:00:00Z",
           "2026-00-01T00:00:00Z",
           "2026-02-29T00:00:00Z",
           "2026-04-31T00:00:00Z",
           "2026-11-22T24:00:00Z",
           "2026-11-22T23:60:00Z",
           "2026-11-22T23:59:60Z",
           "2026-1-22T14:03:00Z",
           "26-11-22T14:03:00Z",
           "+2026-11-22T14:03:00Z",
           "2026-11-22T14:03:00UTC",
           "1795356180000",
       }) {
    EXPECT_EQ(parse_rfc3339(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(FormatRfc3339, UtcWithMilliseconds) {
  EXPECT_EQ(format_rfc3339(from_epoch_ms(1795327380250)), "2026-11-22T06:03:00.250Z");
  EXPECT_EQ(format_rfc3339(from_epoch_ms(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339(from_epoch_ms(-1)), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(format_rfc3339(from_epoch_ms(951868799999)), "2000-02-29T23:59:59.999Z");
}

TEST(FormatRfc3339, SameTextAsTheDateLibrary) {
  // The hand-written formatter against date::format, over its whole range and both ends.
  std::mt19937_64 rng(3340);
  std::uniform_int_distribution<std::int64_t> pick(-62167219200000, 253402300799999);  // 0-9999
  std::vector<std::int64_t> ms{-62167219200000, 253402300799999, -1,           0,
                               86399999,        86400000,        951868799999, 951868800000};
  for (int i = 0; i < 20000; ++i) ms.push_back(pick(rng));
  for (const std::int64_t v : ms) {
    const Instant t = from_epoch_ms(v);
    ASSERT_EQ(format_rfc3339(t), date::format("%FT%TZ", t)) << v;
  }
  // Outside 0000-9999: the library's form.
  const Instant far = from_epoch_ms(253402300800000);
  EXPECT_EQ(format_rfc3339(far), date::format("%FT%TZ", far));
}

TEST(FormatRfc3339, RoundTripsThroughParse) {
  std::mt19937_64 rng(3339);
  std::uniform_int_distribution<std::int64_t> pick(-2208988800000, 4102444800000);  // 1900-2100
  for (int i = 0; i < 20000; ++i) {
    const Instant t = from_epoch_ms(pick(rng));
    const std::string text = format_rfc3339(t);
    ASSERT_EQ(text.size(), 24U) << text;
    ASSERT_EQ(parse_rfc3339(text), t) << text;
  }
}

TEST(Clock, FixedAndReal) {
  const Instant fixed = from_epoch_ms(1795327380250);
  EXPECT_EQ(Clock(fixed).now(), fixed);
  const auto before = std::chrono::system_clock::now();
  const Instant now = Clock().now();
  const auto after = std::chrono::system_clock::now();
  EXPECT_GE(now, std::chrono::time_point_cast<Millis>(before));
  EXPECT_LE(now, std::chrono::time_point_cast<Millis>(after) + Millis{1});
}

}  // namespace
}  // namespace bk
