// The metrics registry and its text format: exact renderings (escapes, histogram buckets,
// number forms), misuse refused, and every rendering accepted by the independent validator
// in tests/support, which is itself shown to reject what Prometheus would reject.
#include "core/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "prom_text.h"

namespace bk {
namespace {

using metrics::Registry;

TEST(Metrics, CountersAndGaugesRenderWithHelpAndType) {
  Registry r;
  auto& applied = r.counter("bk_events_total", "Events applied.");
  auto& temp = r.gauge("bk_temperature", "A gauge.");
  applied.add(3);
  applied.add(2);
  temp.set(-1.5);
  EXPECT_EQ(r.render(),
            "# HELP bk_events_total Events applied.\n"
            "# TYPE bk_events_total counter\n"
            "bk_events_total 5\n"
            "# HELP bk_temperature A gauge.\n"
            "# TYPE bk_temperature gauge\n"
            "bk_temperature -1.5\n");
  EXPECT_EQ(applied.value(), 5);
}

TEST(Metrics, LabelValuesAndHelpAreEscaped) {
  Registry r;
  auto& c = r.counter("bk_odd_total", "Help with a \\ backslash\nand a newline; \"quotes\" stay.");
  c.add(1, {{"reason", "back\\slash \"quoted\"\nnext line"}});
  const std::string text = r.render();
  EXPECT_EQ(text,
            "# HELP bk_odd_total Help with a \\\\ backslash\\nand a newline; \"quotes\" stay.\n"
            "# TYPE bk_odd_total counter\n"
            "bk_odd_total{reason=\"back\\\\slash \\\"quoted\\\"\\nnext line\"} 1\n");
  const auto parsed = test::prom::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  // Read back, the original strings come out.
  EXPECT_EQ(parsed.exposition.family("bk_odd_total")->help,
            "Help with a \\ backslash\nand a newline; \"quotes\" stay.");
  EXPECT_EQ(
      parsed.exposition.value("bk_odd_total", {{"reason", "back\\slash \"quoted\"\nnext line"}}),
      1.0);
}

TEST(Metrics, SeriesAreKeyedByLabelSetsInAnyOrderAndSorted) {
  Registry r;
  auto& c = r.counter("bk_x_total", "x");
  c.add(1, {{"b", "2"}, {"a", "1"}});
  c.add(1, {{"a", "1"}, {"b", "2"}});
  c.add(7, {{"a", "0"}, {"b", "9"}});
  EXPECT_EQ(r.render(),
            "# HELP bk_x_total x\n# TYPE bk_x_total counter\n"
            "bk_x_total{a=\"0\",b=\"9\"} 7\n"
            "bk_x_total{a=\"1\",b=\"2\"} 2\n");
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry r;
  auto& h = r.histogram("bk_batch_seconds", "Batch durations.", {0.25, 0.5, 1});
  for (const double v : {0.125, 0.25, 0.375, 0.75, 0.75, 3.0}) h.observe(v);
  h.observe(0.75, {{"kind", "x"}});
  const std::string text = r.render();
  EXPECT_EQ(text,
            "# HELP bk_batch_seconds Batch durations.\n"
            "# TYPE bk_batch_seconds histogram\n"
            "bk_batch_seconds_bucket{le=\"0.25\"} 2\n"  // le is inclusive: 0.25 counts here
            "bk_batch_seconds_bucket{le=\"0.5\"} 3\n"
            "bk_batch_seconds_bucket{le=\"1\"} 5\n"
            "bk_batch_seconds_bucket{le=\"+Inf\"} 6\n"
            "bk_batch_seconds_sum 5.25\n"
            "bk_batch_seconds_count 6\n"
            "bk_batch_seconds_bucket{kind=\"x\",le=\"0.25\"} 0\n"
            "bk_batch_seconds_bucket{kind=\"x\",le=\"0.5\"} 0\n"
            "bk_batch_seconds_bucket{kind=\"x\",le=\"1\"} 1\n"
            "bk_batch_seconds_bucket{kind=\"x\",le=\"+Inf\"} 1\n"
            "bk_batch_seconds_sum{kind=\"x\"} 0.75\n"
            "bk_batch_seconds_count{kind=\"x\"} 1\n");
  const auto parsed = test::prom::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
}

TEST(Metrics, NumbersReadBackExactly) {
  EXPECT_EQ(metrics::format_value(0), "0");
  EXPECT_EQ(metrics::format_value(42), "42");
  EXPECT_EQ(metrics::format_value(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(metrics::format_value(0.1), "0.1");
  EXPECT_EQ(metrics::format_value(1786000000.125), "1786000000.125");
  EXPECT_EQ(metrics::format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(metrics::format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(metrics::format_value(std::nan("")), "NaN");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1e12, 1e12);
  for (int i = 0; i < 1000; ++i) {
    const double v = d(rng);
    EXPECT_EQ(std::stod(metrics::format_value(v)), v);
  }
}

TEST(Metrics, EmptyFamiliesAreNotRenderedUntilTouched) {
  Registry r;
  auto& c = r.counter("bk_refused_total", "Refused.");
  EXPECT_EQ(r.render(), "");
  c.touch({{"reason", "closed"}});
  EXPECT_EQ(r.render(),
            "# HELP bk_refused_total Refused.\n# TYPE bk_refused_total counter\n"
            "bk_refused_total{reason=\"closed\"} 0\n");
}

TEST(Metrics, MisuseIsRefused) {
  Registry r;
  EXPECT_THROW(r.counter("bk_no_suffix", "x"), std::invalid_argument);
  EXPECT_THROW(r.gauge("bk_gauge_total", "x"), std::invalid_argument);
  EXPECT_THROW(r.gauge("0bad", "x"), std::invalid_argument);
  EXPECT_THROW(r.gauge("bad-name", "x"), std::invalid_argument);
  EXPECT_THROW(r.histogram("bk_h", "x", {1, 0.5}), std::invalid_argument);
  auto& c = r.counter("bk_c_total", "x");
  EXPECT_EQ(&r.counter("bk_c_total", "x"), &c);  // the same family again
  EXPECT_THROW(r.gauge("bk_c_total", "x"), std::invalid_argument);
  EXPECT_THROW(r.counter("bk_c_total", "other help"), std::invalid_argument);
  EXPECT_THROW(c.add(-1), std::invalid_argument);
  EXPECT_THROW(c.set(1), std::logic_error);
  EXPECT_THROW(c.add(1, {{"bad label", "v"}}), std::invalid_argument);
  EXPECT_THROW(c.add(1, {{"__reserved", "v"}}), std::invalid_argument);
  EXPECT_THROW(c.add(1, {{"a", "1"}, {"a", "2"}}), std::invalid_argument);
  auto& h = r.histogram("bk_h", "x", {1});
  EXPECT_THROW(h.observe(1, {{"le", "1"}}), std::invalid_argument);
  EXPECT_THROW(r.gauge("bk_h_count", "x"), std::invalid_argument);  // h renders bk_h_count
}

TEST(Metrics, FindSampleReadsAPreviousRendering) {
  Registry r;
  r.gauge("bk_last_success_timestamp_seconds", "x").set(1786000000.5);
  r.gauge("bk_last_success_timestamp_seconds_other", "x").set(3);
  const std::string text = r.render();
  EXPECT_EQ(metrics::find_sample(text, "bk_last_success_timestamp_seconds"), 1786000000.5);
  EXPECT_EQ(metrics::find_sample(text, "bk_last"), std::nullopt);
  EXPECT_EQ(metrics::find_sample("garbage\nbk_x notanumber\n", "bk_x"), std::nullopt);
}

TEST(Metrics, RenderingWhileUpdatingFromAnotherThreadStaysValid) {
  Registry r;
  auto& c = r.counter("bk_c_total", "x");
  auto& h = r.histogram("bk_h_seconds", "x", {0.1, 1});
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) {
      c.add(1, {{"n", std::to_string(i % 7)}});
      h.observe(i % 3 == 0 ? 0.05 : 2);
    }
  });
  for (int i = 0; i < 200; ++i) {
    const auto parsed = test::prom::parse(r.render());
    ASSERT_TRUE(parsed.ok()) << parsed.error;
  }
  writer.join();
  double total = 0;
  for (int n = 0; n < 7; ++n) total += c.value({{"n", std::to_string(n)}});
  EXPECT_EQ(total, 20000);
}

// The validator must reject what Prometheus rejects, or the tests above prove nothing.
TEST(PromValidator, RejectsInvalidExpositions) {
  const auto bad = [](const std::string& text) { return !test::prom::parse(text).ok(); };
  EXPECT_FALSE(bad("# HELP a_total x\n# TYPE a_total counter\na_total 1\n"));
  EXPECT_TRUE(bad("a_total 1\n"));                                     // no TYPE
  EXPECT_TRUE(bad("# TYPE a_total counter\na_total 1"));               // no final newline
  EXPECT_TRUE(bad("# TYPE a_total counter\na_total 1\na_total 2\n"));  // duplicate series
  EXPECT_TRUE(bad("# TYPE a_total counter\na_total -1\n"));            // counter down
  EXPECT_TRUE(bad("# TYPE a_total countr\na_total 1\n"));              // unknown type
  EXPECT_TRUE(bad("# TYPE a-b gauge\na-b 1\n"));                       // bad name
  EXPECT_TRUE(bad("# TYPE a gauge\na{x=\"1\\t\"} 1\n"));               // bad escape
  EXPECT_TRUE(bad("# TYPE a gauge\na{x=\"1} 1\n"));                    // unterminated
  EXPECT_TRUE(bad("# TYPE a gauge\na{x=1} 1\n"));                      // unquoted
  EXPECT_TRUE(bad("# TYPE a gauge\na{1x=\"1\"} 1\n"));                 // bad label name
  EXPECT_TRUE(bad("# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n"));          // label twice
  EXPECT_TRUE(bad("# TYPE a gauge\na one\n"));                         // bad value
  EXPECT_TRUE(bad("# HELP a x\\y\n# TYPE a gauge\na 1\n"));            // bad HELP escape
  EXPECT_TRUE(bad("# TYPE a gauge\n# TYPE b gauge\nb 1\na 2\n"));      // not contiguous
  EXPECT_TRUE(bad("# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n"));
  EXPECT_TRUE(bad("# TYPE a gauge\na 1\n# TYPE a gauge\n"));  // TYPE after samples
  const std::string h = "# TYPE h histogram\n";
  EXPECT_FALSE(bad(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"));
  EXPECT_TRUE(bad(h + "h_bucket{le=\"1\"} 1\nh_sum 3\nh_count 1\n"));  // no +Inf
  EXPECT_TRUE(bad(h + "h_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 3\nh_count 1\n"));
  EXPECT_TRUE(bad(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 3\n"));
  EXPECT_TRUE(bad(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n"));  // no sum
  EXPECT_TRUE(bad(h + "h_bucket 1\nh_sum 3\nh_count 1\n"));  // bucket without le
}

}  // namespace
}  // namespace bk
