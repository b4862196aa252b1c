// Names and ranges of the monthly history partitions, without a server.
#include "cold/history_partitions.h"

#include <gtest/gtest.h>

namespace bk::cold {
namespace {

Instant at(const char* text) {
  return parse_rfc3339(text).value();
}

TEST(HistoryPartitions, AMonthIsNamedByYearAndMonthAndCoversItsDays) {
  using namespace date;
  const Month m = month_of("\"bk\"", year{2027} / February);
  EXPECT_EQ(m.partition, "\"bk\".history_rows_y2027m02");
  EXPECT_EQ(format_rfc3339(m.from), format_rfc3339(at("2027-02-01T00:00:00Z")));
  EXPECT_EQ(format_rfc3339(m.to), format_rfc3339(at("2027-03-01T00:00:00Z")));
  const Month december = month_of("\"bk\"", year{2026} / December);
  EXPECT_EQ(december.partition, "\"bk\".history_rows_y2026m12");
  EXPECT_EQ(format_rfc3339(december.to), format_rfc3339(at("2027-01-01T00:00:00Z")));
}

TEST(HistoryPartitions, AnInstantBelongsToTheMonthOfItsUtcDate) {
  using namespace date;
  EXPECT_EQ(month_containing(at("2027-01-31T23:59:59.999Z")), year{2027} / January);
  EXPECT_EQ(month_containing(at("2027-02-01T00:00:00Z")), year{2027} / February);
  const Month m = month_of("q", month_containing(at("2027-05-17T12:00:00Z")));
  EXPECT_LE(m.from, at("2027-05-17T12:00:00Z"));
  EXPECT_GT(m.to, at("2027-05-17T12:00:00Z"));
}

}  // namespace
}  // namespace bk::cold
