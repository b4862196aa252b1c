// The score encoding: exact round trips, order preservation for every layout that fits the
// 53-bit budget, range checks, and the budget message.
#include "core/score_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/period.h"

namespace bk {
namespace {

using std::chrono::hours;

const date::time_zone& utc() {
  return *date::locate_zone("UTC");
}

struct Sample {
  std::int64_t points;
  Instant achieved;
};

struct LayoutCase {
  std::string name;
  ScoreLayout layout;
  Millis longest;
};

std::string describe(const LayoutCase& c) {
  const ScoreLayout& l = c.layout;
  return c.name + " [" + std::to_string(l.min_points) + ", " + std::to_string(l.max_points) + "] " +
         (l.order == Order::desc ? "desc" : "asc") + " " +
         (l.tie == TieBreak::earliest ? "earliest"
          : l.tie == TieBreak::latest ? "latest"
                                      : "none") +
         " res " + std::to_string(l.resolution.count()) + "ms";
}

// Every period kind x resolution x order x tie x points range whose budget fits.
std::vector<LayoutCase> fitting_layouts(std::vector<LayoutCase>* refused = nullptr) {
  std::vector<PeriodSpec> specs;
  for (const char* kind : {"hourly", "daily", "weekly", "monthly", "yearly", "alltime"}) {
    specs.push_back({*parse_period_kind(kind), kind, nullptr});
  }
  specs.push_back({PeriodKind::custom, "cup",
                   std::make_shared<CronSchedule>(CronSchedule::parse("0 18 * * 5"))});
  const std::pair<std::int64_t, std::int64_t> ranges[] = {
      {0, 0},
      {0, 1},
      {0, 1000000},
      {-1000, 1000},
      {-5000000, 0},
      {0, 1000000000},
      {-4000000000LL, 4000000000LL},
      {0, 1000000000000LL},
      {0, 1LL << 40},
      {std::numeric_limits<std::int64_t>::min() / 2, 0},
  };
  std::vector<LayoutCase> out;
  for (const auto& spec : specs) {
    const Millis longest = longest_period(spec, utc());
    for (const Millis res : {Millis{1}, Millis{1000}}) {
      for (const Order order : {Order::desc, Order::asc}) {
        for (const TieBreak tie : {TieBreak::earliest, TieBreak::latest, TieBreak::none}) {
          for (const auto& [lo, hi] : ranges) {
            LayoutCase c{spec.name, make_layout(lo, hi, order, tie, res, longest), longest};
            if (!budget_problem(c.layout)) {
              out.push_back(c);
            } else if (refused) {
              refused->push_back(c);
            }
          }
        }
      }
    }
  }
  return out;
}

const Instant kStart = from_epoch_ms(1795327200000);  // 2026-11-22T06:00:00Z

// The tie-break time as the codec sees it: whole resolution units since the period start.
std::int64_t units(const ScoreLayout& l, Instant t) {
  return (t - kStart).count() / l.resolution.count();
}

// <0 when a ranks better than b, >0 when worse, 0 when they share a rank.
int compare(const ScoreLayout& l, const Sample& a, const Sample& b) {
  if (a.points != b.points) {
    const bool a_better = l.order == Order::desc ? a.points > b.points : a.points < b.points;
    return a_better ? -1 : 1;
  }
  if (l.tie == TieBreak::none) return 0;
  const std::int64_t ua = units(l, a.achieved), ub = units(l, b.achieved);
  if (ua == ub) return 0;
  const bool a_better = l.tie == TieBreak::earliest ? ua < ub : ua > ub;
  return a_better ? -1 : 1;
}

void expect_exact(std::int64_t encoded, const std::string& where) {
  EXPECT_GE(encoded, 0) << where;
  EXPECT_LE(encoded, kMaxExactInteger) << where;
  const double d = static_cast<double>(encoded);
  EXPECT_EQ(static_cast<std::int64_t>(d), encoded) << where;
}

void expect_round_trip(const ScoreCodec& codec, const Sample& s, const std::string& where) {
  const ScoreLayout& l = codec.layout();
  const std::int64_t e = codec.encode(s.points, s.achieved, kStart);
  expect_exact(e, where);
  const Decoded d = codec.decode(e, kStart);
  EXPECT_EQ(d.points, s.points) << where;
  if (l.tie == TieBreak::none) {
    EXPECT_FALSE(d.achieved_at) << where;
  } else {
    ASSERT_TRUE(d.achieved_at) << where;
    EXPECT_EQ(*d.achieved_at, kStart + l.resolution * units(l, s.achieved)) << where;
  }
}

TEST(ScoreCodec, EnoughLayoutsFitTheBudget) {
  std::vector<LayoutCase> refused;
  const auto fitting = fitting_layouts(&refused);
  EXPECT_GT(fitting.size(), 300U);
  EXPECT_GT(refused.size(), 50U);
  for (const LayoutCase& c : fitting) EXPECT_LE(bits_needed(c.layout), 53) << describe(c);
  for (const LayoutCase& c : refused) EXPECT_GT(bits_needed(c.layout), 53) << describe(c);
}

TEST(ScoreCodec, ExtremesRoundTripAndStayExact) {
  for (const LayoutCase& c : fitting_layouts()) {
    const ScoreCodec codec(c.layout);
    const ScoreLayout& l = c.layout;
    const std::string where = describe(c);
    for (const std::int64_t p : {l.min_points, l.max_points, l.min_points / 2 + l.max_points / 2}) {
      for (const Instant t : {kStart, kStart + c.longest, kStart + c.longest / 2,
                              kStart + l.resolution - Millis{1}}) {
        expect_round_trip(codec, {p, t}, where);
      }
    }
    // The largest value the layout can produce is the worst points at the worst time.
    const std::int64_t worst_points = l.order == Order::desc ? l.min_points : l.max_points;
    const Instant worst_time = l.tie == TieBreak::latest ? kStart : kStart + c.longest;
    const std::int64_t largest = codec.encode(worst_points, worst_time, kStart);
    EXPECT_LT(largest, kMaxExactInteger) << where;
    const std::int64_t best_points = l.order == Order::desc ? l.max_points : l.min_points;
    const Instant best_time = l.tie == TieBreak::latest ? kStart + c.longest : kStart;
    EXPECT_EQ(codec.encode(best_points, best_time, kStart), 0) << where;
  }
}

TEST(ScoreCodec, RandomRoundTripsAndOrder) {
  std::mt19937_64 rng(53);
  std::size_t pairs = 0;
  for (const LayoutCase& c : fitting_layouts()) {
    const ScoreCodec codec(c.layout);
    const ScoreLayout& l = c.layout;
    std::uniform_int_distribution<std::int64_t> points(l.min_points, l.max_points);
    std::uniform_int_distribution<std::int64_t> offset(0, c.longest.count());
    // Few distinct values too, so that equal points and equal times occur often.
    std::vector<Sample> few;
    for (int i = 0; i < 4; ++i) few.push_back({points(rng), kStart + Millis{offset(rng)}});
    auto sample = [&](int i) {
      Sample s{points(rng), kStart + Millis{offset(rng)}};
      if (i % 3 == 0) s.points = few[static_cast<std::size_t>(i) % 4].points;
      if (i % 5 == 0) s.achieved = few[static_cast<std::size_t>(i) % 3].achieved;
      if (i % 7 == 0) s.achieved += Millis{i % 1000};  // same second, different ms
      if (s.achieved > kStart + c.longest) s.achieved = kStart + c.longest;
      return s;
    };
    for (int i = 0; i < 300; ++i) {
      const Sample a = sample(i), b = sample(i + 1);
      const std::string where = describe(c) + " a=(" + std::to_string(a.points) + ", " +
                                format_rfc3339(a.achieved) + ") b=(" + std::to_string(b.points) +
                                ", " + format_rfc3339(b.achieved) + ")";
      expect_round_trip(codec, a, where);
      const std::int64_t ea = codec.encode(a.points, a.achieved, kStart);
      const std::int64_t eb = codec.encode(b.points, b.achieved, kStart);
      const int want = compare(l, a, b);
      ASSERT_EQ(ea < eb, want < 0) << where;
      ASSERT_EQ(ea == eb, want == 0) << where;
      ASSERT_EQ(ea > eb, want > 0) << where;
      ++pairs;
    }
  }
  EXPECT_GT(pairs, 90000U);
}

TEST(ScoreCodec, OrderAndTieExamples) {
  const Millis day = longest_period({PeriodKind::daily, "daily", nullptr}, utc());
  const Instant t0 = kStart + Millis{1500}, t1 = kStart + Millis{2500};
  {
    const ScoreCodec c(make_layout(0, 1000, Order::desc, TieBreak::earliest, Millis{1}, day));
    EXPECT_LT(c.encode(10, t1, kStart), c.encode(9, t0, kStart));   // more points win
    EXPECT_LT(c.encode(10, t0, kStart), c.encode(10, t1, kStart));  // then the earlier
  }
  {
    const ScoreCodec c(make_layout(0, 1000, Order::asc, TieBreak::latest, Millis{1}, day));
    EXPECT_LT(c.encode(9, t0, kStart), c.encode(10, t1, kStart));   // fewer points win
    EXPECT_LT(c.encode(10, t1, kStart), c.encode(10, t0, kStart));  // then the later
  }
  {
    // At 1s resolution, 1.5s and 1.9s are the same second: a shared rank.
    const ScoreCodec c(make_layout(0, 1000, Order::desc, TieBreak::earliest, Millis{1000}, day));
    EXPECT_EQ(c.encode(10, t0, kStart), c.encode(10, kStart + Millis{1999}, kStart));
    EXPECT_LT(c.encode(10, t0, kStart), c.encode(10, t1, kStart));
  }
  {
    const ScoreCodec c(make_layout(-50, 50, Order::desc, TieBreak::none, Millis{1}, day));
    EXPECT_EQ(c.encode(-3, t0, kStart), c.encode(-3, t1, kStart));
    EXPECT_LT(c.encode(-3, t0, kStart), c.encode(-4, t0, kStart));
    EXPECT_EQ(c.encode(50, t0, kStart), 0);
    EXPECT_EQ(c.encode(-50, t0, kStart), 100);
    EXPECT_EQ(c.decode(100, kStart).points, -50);
  }
}

TEST(ScoreCodec, OutOfRangeIsRefused) {
  for (const LayoutCase& c : fitting_layouts()) {
    const ScoreCodec codec(c.layout);
    const ScoreLayout& l = c.layout;
    const std::string where = describe(c);
    if (l.min_points > std::numeric_limits<std::int64_t>::min()) {
      EXPECT_THROW(codec.encode(l.min_points - 1, kStart, kStart), OutOfRangeError) << where;
    }
    EXPECT_THROW(codec.encode(l.max_points + 1, kStart, kStart), OutOfRangeError) << where;
    if (l.tie != TieBreak::none) {
      EXPECT_THROW(codec.encode(l.max_points, kStart - Millis{1}, kStart), OutOfRangeError)
          << where;
      // The last encodable instant is the end of the last whole unit of the span.
      const Instant last = kStart + l.resolution * (l.span_units + 1) - Millis{1};
      EXPECT_NO_THROW(codec.encode(l.max_points, last, kStart)) << where;
      EXPECT_THROW(codec.encode(l.max_points, last + Millis{1}, kStart), OutOfRangeError) << where;
      EXPECT_GE(last, kStart + c.longest) << where;
    }
    EXPECT_THROW(codec.decode(-1, kStart), OutOfRangeError) << where;
    const std::int64_t largest = (l.max_points - l.min_points) * l.time_slots() + l.span_units;
    EXPECT_NO_THROW(codec.decode(largest, kStart)) << where;
    EXPECT_THROW(codec.decode(largest + 1, kStart), OutOfRangeError) << where;
  }
}

TEST(ScoreCodecBudget, MessageSaysWhatToChange) {
  const Millis month = longest_period({PeriodKind::monthly, "monthly", nullptr}, utc());
  const ScoreLayout ms =
      make_layout(0, 1000000000000LL, Order::desc, TieBreak::earliest, Millis{1}, month);
  const auto problem = budget_problem(ms);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("time_resolution: s"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("tie_break: none"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("1000000000000"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("53"), std::string::npos) << *problem;
  EXPECT_GT(bits_needed(ms), 53);

  // Already at seconds: that advice would be useless.
  const ScoreLayout s =
      make_layout(0, 1000000000000LL, Order::desc, TieBreak::earliest, Millis{1000}, month);
  ASSERT_TRUE(budget_problem(s));
  EXPECT_EQ(budget_problem(s)->find("time_resolution: s"), std::string::npos) << *budget_problem(s);

  // A typical board fits; without a tie-break even a huge range fits.
  EXPECT_EQ(
      budget_problem(make_layout(0, 1000000, Order::desc, TieBreak::earliest, Millis{1}, month)),
      std::nullopt);
  EXPECT_EQ(budget_problem(
                make_layout(0, 1000000000000LL, Order::desc, TieBreak::none, Millis{1}, month)),
            std::nullopt);

  const auto inverted =
      budget_problem(make_layout(10, 5, Order::desc, TieBreak::earliest, Millis{1}, month));
  ASSERT_TRUE(inverted);
  EXPECT_NE(inverted->find("min_points"), std::string::npos) << *inverted;
}

TEST(ScoreCodecBudget, SuggestedMaximumIsTheWidestThatFits) {
  for (const Millis res : {Millis{1}, Millis{1000}}) {
    for (const std::int64_t min : {0LL, -1000LL}) {
      const Millis year = longest_period({PeriodKind::yearly, "yearly", nullptr}, utc());
      const ScoreLayout l =
          make_layout(min, min + (1LL << 45), Order::asc, TieBreak::latest, res, year);
      const auto problem = budget_problem(l);
      ASSERT_TRUE(problem);
      const std::string marker = "max_points: ";
      const auto at = problem->find(marker);
      ASSERT_NE(at, std::string::npos) << *problem;
      const std::int64_t suggested = std::stoll(problem->substr(at + marker.size()));
      const ScoreLayout ok = make_layout(min, suggested, Order::asc, TieBreak::latest, res, year);
      EXPECT_EQ(budget_problem(ok), std::nullopt) << *problem;
      EXPECT_EQ(bits_needed(ok), 53) << *problem;
      const ScoreLayout one_more =
          make_layout(min, suggested + 1, Order::asc, TieBreak::latest, res, year);
      EXPECT_TRUE(budget_problem(one_more)) << *problem;
    }
  }
}

TEST(ScoreCodecBudget, SpanCoversTheLongestPeriod) {
  const Millis week = hours{24 * 7 + 3};
  const ScoreLayout ms = make_layout(0, 10, Order::desc, TieBreak::earliest, Millis{1}, week);
  EXPECT_EQ(ms.span_units, week.count());
  const ScoreLayout s =
      make_layout(0, 10, Order::desc, TieBreak::earliest, Millis{1000}, week + Millis{1});
  EXPECT_EQ(s.span_units, week.count() / 1000 + 1);  // rounded up
  EXPECT_EQ(make_layout(0, 10, Order::desc, TieBreak::none, Millis{1}, week).span_units, 0);
  EXPECT_EQ(bits_needed(make_layout(0, 0, Order::desc, TieBreak::none, Millis{1}, week)), 0);
}

}  // namespace
}  // namespace bk
