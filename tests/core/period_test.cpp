// Calendar periods (hourly ... yearly, alltime) against an independent oracle written with
// Python's zoneinfo (tests/core/period_oracle.py), plus explicit DST and ISO-week cases and
// period_from_id round trips.
#include "core/period.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "zone_testing.h"

namespace bk {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

using zone_testing::at;
using zone_testing::tz;

PeriodSpec spec_of(PeriodKind kind) {
  return PeriodSpec{kind, std::string(period_kind_name(kind)), nullptr};
}

constexpr std::array<PeriodKind, 5> kCalendarKinds{PeriodKind::hourly, PeriodKind::daily,
                                                   PeriodKind::weekly, PeriodKind::monthly,
                                                   PeriodKind::yearly};

const char* const kZones[] = {"UTC",           "Asia/Shanghai",       "America/New_York",
                              "Europe/London", "Australia/Lord_Howe", "America/Santiago",
                              "Asia/Kolkata",  "Pacific/Chatham"};

std::string describe(const Period& p) {
  return p.id + " [" + format_rfc3339(p.start) + ", " + format_rfc3339(p.end) + ")";
}

// --------------------------------------------------------------------- the Python oracle

struct Probe {
  std::string zone;
  Instant t;
};

// Runs the oracle on the probes; returns one line of 15 fields per probe.
std::vector<std::vector<std::string>> run_oracle(const std::vector<Probe>& probes) {
  static int calls = 0;
  const std::string input = testing::TempDir() + "bk_period_oracle_" + std::to_string(getpid()) +
                            "_" + std::to_string(++calls) + ".txt";
  {
    std::ofstream out(input);
    for (const Probe& p : probes) out << p.zone << ' ' << to_epoch_ms(p.t) << '\n';
  }
  const std::string cmd =
      "python3 '" + std::string(BK_SOURCE_DIR) + "/tests/core/period_oracle.py' < '" + input + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + cmd);
  std::string output;
  char buf[65536];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  std::remove(input.c_str());
  if (status != 0)
    throw std::runtime_error("oracle failed (status " + std::to_string(status) + ")");
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    lines.push_back(std::move(f));
  }
  return lines;
}

// Every UTC offset change of the zone in [from, to).
std::vector<Instant> transitions(const date::time_zone& zone, Instant from, Instant to) {
  std::vector<Instant> out;
  auto info = zone.get_info(from);
  while (info.end < to) {
    const Instant t = std::chrono::time_point_cast<Millis>(info.end);
    const auto next = zone.get_info(info.end);
    if (next.offset != info.offset) out.push_back(t);
    info = next;
  }
  return out;
}

// Compares every calendar period of every probe with the oracle and checks the round trip
// through period_from_id. Returns the number of probes compared.
std::size_t compare_with_oracle(const std::vector<Probe>& probes) {
  const auto oracle = run_oracle(probes);
  EXPECT_EQ(oracle.size(), probes.size());
  std::size_t failures = 0;
  for (std::size_t i = 0; i < probes.size() && i < oracle.size() && failures < 20; ++i) {
    const Probe& probe = probes[i];
    const auto& zone = tz(probe.zone.c_str());
    const auto& want = oracle[i];
    if (want.size() != 15) {
      ADD_FAILURE() << "oracle line " << i << " has " << want.size() << " fields";
      ++failures;
      continue;
    }
    for (std::size_t k = 0; k < kCalendarKinds.size(); ++k) {
      const PeriodSpec spec = spec_of(kCalendarKinds[k]);
      const Period got = period_containing(spec, zone, probe.t);
      const Period expected{want[3 * k], from_epoch_ms(std::stoll(want[3 * k + 1])),
                            from_epoch_ms(std::stoll(want[3 * k + 2]))};
      if (!(got == expected)) {
        ADD_FAILURE() << spec.name << " period of " << format_rfc3339(probe.t) << " in "
                      << probe.zone << ": got " << describe(got) << ", oracle "
                      << describe(expected);
        ++failures;
        continue;
      }
      const auto back = period_from_id(spec, zone, got.id);
      if (!back || !(*back == got)) {
        ADD_FAILURE() << spec.name << " period_from_id(" << got.id << ") in " << probe.zone
                      << " gave " << (back ? describe(*back) : "nullopt") << ", want "
                      << describe(got);
        ++failures;
      }
      if (got.end - got.start > longest_period(spec, zone)) {
        ADD_FAILURE() << describe(got) << " is longer than longest_period";
        ++failures;
      }
    }
  }
  return oracle.size();
}

// Random instants in [from, to) for every zone, instants around every UTC offset change,
// and the first and last millisecond of the periods found (boundaries are where mistakes
// hide).
std::vector<Probe> probes_between(Instant from, Instant to, int random_per_zone,
                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(to_epoch_ms(from), to_epoch_ms(to) - 1);
  std::vector<Probe> probes;
  for (const char* name : kZones) {
    const auto& zone = tz(name);
    for (int i = 0; i < random_per_zone; ++i) {
      const Instant t = from_epoch_ms(pick(rng));
      probes.push_back({name, t});
      const auto kind = kCalendarKinds[static_cast<std::size_t>(i) % kCalendarKinds.size()];
      const Period p = period_containing(spec_of(kind), zone, t);
      probes.push_back({name, p.start});
      probes.push_back({name, p.end - Millis{1}});
    }
    for (const Instant t : transitions(zone, from, to)) {
      for (const Millis d : {Millis{-1}, Millis{0}, Millis{1}, Millis{minutes{-30}},
                             Millis{minutes{30}}, Millis{hours{-1}}, Millis{hours{1}} - Millis{1},
                             Millis{hours{-25}}, Millis{hours{25}}}) {
        probes.push_back({name, t + d});
      }
    }
  }
  return probes;
}

TEST(PeriodOracle, RandomInstantsAndTransitionsAgree) {
  // date reads the OS tz database, whose files list transitions only up to 2037 (see the
  // disabled test below), so the comparison stays before 2038.
  const auto probes =
      probes_between(at("2000-01-01T00:00:00Z"), at("2038-01-01T00:00:00Z"), 500, 20261122);
  ASSERT_GT(probes.size(), 8U * 1500U);
  EXPECT_EQ(compare_with_oracle(probes), probes.size());
}

// Fails with howardhinnant date 3.0.1 built with USE_OS_TZDB: it ignores the POSIX TZ rule at
// the end of a TZif file, so after the last listed transition (2037) no zone observes DST
// any more, while Python (and glibc) keep applying the rule. Run with
// --gtest_also_run_disabled_tests to see it.
TEST(PeriodOracle, DISABLED_After2037) {
  const auto probes =
      probes_between(at("2038-01-01T00:00:00Z"), at("2061-01-01T00:00:00Z"), 300, 2038);
  EXPECT_EQ(compare_with_oracle(probes), probes.size());
}

TEST(PeriodOracle, ExplicitEdges) {
  std::vector<Probe> probes;
  for (const char* t :
       {"2026-03-08T06:59:59.999Z", "2026-03-08T07:00:00Z", "2026-11-01T05:30:00Z",
        "2026-11-01T06:30:00Z", "2026-11-01T07:00:00Z", "2026-12-31T23:59:59.999-05:00"}) {
    probes.push_back({"America/New_York", at(t)});
  }
  for (const char* t : {"2026-09-06T04:00:00Z", "2026-09-06T03:59:59.999Z", "2026-04-05T02:30:00Z",
                        "2026-04-05T03:30:00Z", "2026-04-05T04:00:00Z"}) {
    probes.push_back({"America/Santiago", at(t)});
  }
  for (const char* t : {"2026-10-03T15:30:00Z", "2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z"}) {
    probes.push_back({"Australia/Lord_Howe", at(t)});
  }
  for (const char* t : {"2026-12-31T12:00:00Z", "2027-01-01T12:00:00Z", "2024-12-30T00:00:00Z",
                        "2021-01-03T23:59:59.999Z", "2020-12-31T12:00:00Z"}) {
    probes.push_back({"UTC", at(t)});
  }
  EXPECT_EQ(compare_with_oracle(probes), probes.size());
}

// ------------------------------------------------------------------ explicit expectations

struct Expect {
  PeriodKind kind;
  const char* zone;
  const char* t;
  const char* id;
  const char* start;
  const char* end;
};

// Periods at DST changes, in half- and three-quarter-hour zones, at local dates other than
// the UTC one, and at ISO week-year and month ends.
const Expect kDstAndCalendarEdges[] = {
    // New York: a 23-hour and a 25-hour day.
    {PeriodKind::daily, "America/New_York", "2026-03-08T12:00:00-04:00", "2026-03-08",
     "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
    {PeriodKind::daily, "America/New_York", "2026-11-01T12:00:00-05:00", "2026-11-01",
     "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
    // The hour before the jump, and the hour after it (02:xx does not exist).
    {PeriodKind::hourly, "America/New_York", "2026-03-08T06:59:59.999Z", "2026-03-08T01",
     "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"},
    {PeriodKind::hourly, "America/New_York", "2026-03-08T07:00:00Z", "2026-03-08T03",
     "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
    // The repeated 01:xx is one two-hour period, whichever occurrence.
    {PeriodKind::hourly, "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-01T01",
     "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
    {PeriodKind::hourly, "America/New_York", "2026-11-01T01:30:00-05:00", "2026-11-01T01",
     "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
    {PeriodKind::weekly, "America/New_York", "2026-11-01T12:00:00-05:00", "2026-W44",
     "2026-10-26T04:00:00Z", "2026-11-02T05:00:00Z"},
    {PeriodKind::monthly, "America/New_York", "2026-03-31T23:59:59.999-04:00", "2026-03",
     "2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z"},
    // Santiago: midnight does not exist on 2026-09-06; 23:xx repeats on 2026-04-04.
    {PeriodKind::daily, "America/Santiago", "2026-09-06T12:00:00-03:00", "2026-09-06",
     "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"},
    {PeriodKind::daily, "America/Santiago", "2026-04-04T23:30:00-04:00", "2026-04-04",
     "2026-04-04T03:00:00Z", "2026-04-05T04:00:00Z"},
    {PeriodKind::weekly, "America/Santiago", "2026-09-07T00:00:00-03:00", "2026-W37",
     "2026-09-07T03:00:00Z", "2026-09-14T03:00:00Z"},
    // Lord Howe: 02:00 jumps to 02:30, so hour 02 lasts 30 minutes.
    {PeriodKind::hourly, "Australia/Lord_Howe", "2026-10-04T02:45:00+11:00", "2026-10-04T02",
     "2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z"},
    // Chatham goes back from 03:45 to 02:45: 03:00 exists twice, and the second
    // 02:45-02:59 comes after the first 03:00, so it is in hour 03 (two hours long).
    {PeriodKind::hourly, "Pacific/Chatham", "2026-04-04T13:50:00Z", "2026-04-05T03",
     "2026-04-04T13:15:00Z", "2026-04-04T15:15:00Z"},
    {PeriodKind::hourly, "Pacific/Chatham", "2026-04-04T14:05:00Z", "2026-04-05T03",
     "2026-04-04T13:15:00Z", "2026-04-04T15:15:00Z"},
    {PeriodKind::hourly, "Pacific/Chatham", "2026-04-04T13:14:59.999Z", "2026-04-05T02",
     "2026-04-04T12:15:00Z", "2026-04-04T13:15:00Z"},
    // Half- and three-quarter-hour zones.
    {PeriodKind::daily, "Asia/Kolkata", "2026-11-22T00:00:00+05:30", "2026-11-22",
     "2026-11-21T18:30:00Z", "2026-11-22T18:30:00Z"},
    {PeriodKind::hourly, "Pacific/Chatham", "2026-07-01T10:59:00+12:45", "2026-07-01T10",
     "2026-06-30T21:15:00Z", "2026-06-30T22:15:00Z"},
    // The local date, not the UTC one.
    {PeriodKind::daily, "Asia/Shanghai", "2026-11-21T16:00:00Z", "2026-11-22",
     "2026-11-21T16:00:00Z", "2026-11-22T16:00:00Z"},
    {PeriodKind::weekly, "Asia/Shanghai", "2026-11-22T14:03:00+08:00", "2026-W47",
     "2026-11-15T16:00:00Z", "2026-11-22T16:00:00Z"},
    {PeriodKind::hourly, "Asia/Shanghai", "2026-11-22T14:03:00+08:00", "2026-11-22T14",
     "2026-11-22T06:00:00Z", "2026-11-22T07:00:00Z"},
    // ISO week-years.
    {PeriodKind::weekly, "UTC", "2026-12-31T12:00:00Z", "2026-W53", "2026-12-28T00:00:00Z",
     "2027-01-04T00:00:00Z"},
    {PeriodKind::weekly, "UTC", "2027-01-01T12:00:00Z", "2026-W53", "2026-12-28T00:00:00Z",
     "2027-01-04T00:00:00Z"},
    {PeriodKind::weekly, "UTC", "2024-12-30T00:00:00Z", "2025-W01", "2024-12-30T00:00:00Z",
     "2025-01-06T00:00:00Z"},
    {PeriodKind::weekly, "UTC", "2021-01-03T23:59:59.999Z", "2020-W53", "2020-12-28T00:00:00Z",
     "2021-01-04T00:00:00Z"},
    {PeriodKind::weekly, "UTC", "2026-11-23T00:00:00Z", "2026-W48", "2026-11-23T00:00:00Z",
     "2026-11-30T00:00:00Z"},
    {PeriodKind::monthly, "UTC", "2024-02-29T23:59:59.999Z", "2024-02", "2024-02-01T00:00:00Z",
     "2024-03-01T00:00:00Z"},
    {PeriodKind::yearly, "Asia/Shanghai", "2026-12-31T16:00:00Z", "2027", "2026-12-31T16:00:00Z",
     "2027-12-31T16:00:00Z"},
    {PeriodKind::yearly, "America/New_York", "2027-01-01T04:59:59.999Z", "2026",
     "2026-01-01T05:00:00Z", "2027-01-01T05:00:00Z"},
};

TEST(PeriodExplicit, DstAndCalendarEdges) {
  for (const Expect& c : kDstAndCalendarEdges) {
    const PeriodSpec spec = spec_of(c.kind);
    const auto& zone = tz(c.zone);
    const Period want{c.id, at(c.start), at(c.end)};
    const Period got = period_containing(spec, zone, at(c.t));
    EXPECT_EQ(describe(got), describe(want)) << spec.name << " " << c.zone << " " << c.t;
    const auto back = period_from_id(spec, zone, c.id);
    EXPECT_TRUE(back && *back == want) << spec.name << " " << c.zone << " " << c.id;
  }
}

TEST(PeriodExplicit, DayLengths) {
  const auto& ny = tz("America/New_York");
  const PeriodSpec daily = spec_of(PeriodKind::daily);
  const auto len = [&](const char* id) {
    const auto p = period_from_id(daily, ny, id);
    return p ? p->end - p->start : Millis{0};
  };
  EXPECT_EQ(len("2026-03-08"), hours{23});
  EXPECT_EQ(len("2026-03-09"), hours{24});
  EXPECT_EQ(len("2026-11-01"), hours{25});
}

TEST(PeriodAlltime, FixedBoundsAndRefusal) {
  const PeriodSpec all = spec_of(PeriodKind::alltime);
  const auto& sh = tz("Asia/Shanghai");
  const Period p = period_containing(all, sh, at("2026-11-22T14:03:00+08:00"));
  EXPECT_EQ(p.id, "all");
  EXPECT_EQ(p.start, at("2020-01-01T00:00:00Z"));
  EXPECT_EQ(p.end, at("2100-01-01T00:00:00Z"));
  EXPECT_EQ(period_containing(all, sh, p.start), p);
  EXPECT_EQ(period_containing(all, sh, p.end - Millis{1}), p);
  EXPECT_THROW(period_containing(all, sh, p.start - Millis{1}), RefusedError);
  EXPECT_THROW(period_containing(all, sh, p.end), RefusedError);
  EXPECT_EQ(period_from_id(all, sh, "all"), p);
  EXPECT_EQ(period_from_id(all, sh, "ALL"), std::nullopt);
  EXPECT_EQ(period_from_id(all, sh, "2026"), std::nullopt);
  EXPECT_EQ(longest_period(all, sh), p.end - p.start);
}

TEST(PeriodKinds, Names) {
  for (const PeriodKind k : kCalendarKinds) {
    EXPECT_EQ(parse_period_kind(period_kind_name(k)), k);
  }
  EXPECT_EQ(parse_period_kind("alltime"), PeriodKind::alltime);
  EXPECT_EQ(parse_period_kind("custom"), std::nullopt);
  EXPECT_EQ(parse_period_kind("Daily"), std::nullopt);
  EXPECT_EQ(parse_period_kind(""), std::nullopt);
}

TEST(PeriodFromId, RejectsMalformedAndNonexistent) {
  using K = PeriodKind;
  struct Bad {
    PeriodKind kind;
    const char* zone;
    const char* id;
  };
  const Bad bad[] = {
      {K::monthly, "UTC", "2026-13"},
      {K::monthly, "UTC", "2026-00"},
      {K::monthly, "UTC", "2026-1"},
      {K::monthly, "UTC", "2026-011"},
      {K::monthly, "UTC", "garbage"},
      {K::weekly, "UTC", "2026-W54"},
      {K::weekly, "UTC", "2025-W53"},  // 2025 has 52 ISO weeks
      {K::weekly, "UTC", "2026-W00"},
      {K::weekly, "UTC", "2026-w47"},
      {K::weekly, "UTC", "2026-W4"},
      {K::weekly, "UTC", "2026-47"},
      {K::daily, "UTC", "2026-02-30"},
      {K::daily, "UTC", "2025-02-29"},
      {K::daily, "UTC", "2026-11-2"},
      {K::daily, "UTC", "2026-11-22x"},
      {K::daily, "UTC", "2026/11/22"},
      {K::daily, "UTC", "+026-11-22"},
      {K::daily, "UTC", "garbage"},
      {K::daily, "UTC", ""},
      {K::daily, "UTC", "2026-W47"},
      {K::daily, "Pacific/Apia", "2011-12-30"},  // Samoa skipped this day
      {K::hourly, "UTC", "2026-11-22T24"},
      {K::hourly, "UTC", "2026-11-22T1"},
      {K::hourly, "UTC", "2026-11-22 14"},
      {K::hourly, "UTC", "2026-11-22"},
      {K::hourly, "America/New_York", "2026-03-08T02"},  // skipped by DST
      {K::yearly, "UTC", "26"},
      {K::yearly, "UTC", "2026-01"},
      {K::yearly, "UTC", "garbage"},
      {K::alltime, "UTC", "garbage"},
  };
  for (const Bad& b : bad) {
    EXPECT_EQ(period_from_id(spec_of(b.kind), tz(b.zone), b.id), std::nullopt)
        << period_kind_name(b.kind) << " " << b.zone << " '" << b.id << "'";
  }
  // Valid neighbours of the rejected ones.
  EXPECT_TRUE(period_from_id(spec_of(K::weekly), tz("UTC"), "2026-W53"));
  EXPECT_TRUE(period_from_id(spec_of(K::weekly), tz("UTC"), "2025-W52"));
  EXPECT_TRUE(period_from_id(spec_of(K::daily), tz("UTC"), "2024-02-29"));
  EXPECT_TRUE(period_from_id(spec_of(K::daily), tz("Pacific/Apia"), "2011-12-31"));
  EXPECT_TRUE(period_from_id(spec_of(K::hourly), tz("America/New_York"), "2026-03-08T03"));
  EXPECT_TRUE(period_from_id(spec_of(K::hourly), tz("UTC"), "2026-03-08T02"));
  EXPECT_TRUE(period_from_id(spec_of(K::monthly), tz("UTC"), "2026-12"));
}

TEST(PeriodLongest, BoundsTheNominalLength) {
  const auto& utc = tz("UTC");
  EXPECT_GE(longest_period(spec_of(PeriodKind::hourly), utc), hours{2});  // fall-back hour
  EXPECT_GE(longest_period(spec_of(PeriodKind::daily), utc), hours{25});
  EXPECT_GE(longest_period(spec_of(PeriodKind::weekly), utc), hours{24 * 7 + 1});
  EXPECT_GE(longest_period(spec_of(PeriodKind::monthly), utc), hours{24 * 31 + 1});
  EXPECT_GE(longest_period(spec_of(PeriodKind::yearly), utc), hours{24 * 366 + 1});
}

// The finder remembers the last period: whatever order instants come in (ascending, as
// events mostly do, or shuffled), across DST changes, it gives what period_containing gives.
TEST(PeriodFinder, GivesWhatPeriodContainingGives) {
  std::vector<PeriodSpec> specs;
  for (const PeriodKind kind : kCalendarKinds) specs.push_back(spec_of(kind));
  specs.push_back(PeriodSpec{PeriodKind::custom, "friday",
                             std::make_shared<CronSchedule>(CronSchedule::parse("0 18 * * 5"))});
  specs.push_back(PeriodSpec{PeriodKind::custom, "quarter-hour",
                             std::make_shared<CronSchedule>(CronSchedule::parse("*/15 * * * *"))});
  std::mt19937_64 rng(5);
  const std::int64_t from = to_epoch_ms(at("2026-01-01T00:00:00Z"));
  for (const char* zone : kZones) {
    for (const PeriodSpec& spec : specs) {
      // Instants a few hours apart across a year (every DST change of these zones), then
      // the same shuffled; some fall on period bounds exactly.
      std::vector<Instant> instants;
      std::int64_t t = from;
      while (instants.size() < 3000) {
        t += static_cast<std::int64_t>(rng() % (4 * 3600 * 1000));
        if (rng() % 8 == 0) t -= t % (15 * 60 * 1000);
        instants.push_back(from_epoch_ms(t));
      }
      std::vector<Instant> shuffled = instants;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      PeriodFinder finder(spec, tz(zone));
      for (const auto* list : {&instants, &shuffled}) {
        for (const Instant i : *list) {
          const Period expected = period_containing(spec, tz(zone), i);
          ASSERT_EQ(finder.containing(i), expected)
              << zone << " " << spec.name << " at " << format_rfc3339(i) << ": expected "
              << describe(expected);
        }
      }
    }
  }
}

}  // namespace
}  // namespace bk
