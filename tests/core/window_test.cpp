// Windowed periods (core/period.h PeriodWindow): a period that runs for part of each cycle,
// against an independent oracle written with Python's zoneinfo
// (tests/core/window_oracle.py), plus explicit cases: across midnight and across DST
// changes, ids, reads between windows, the refusal naming the next window.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/period.h"
#include "zone_testing.h"

namespace bk {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

using zone_testing::at;
using zone_testing::tz;

// The oracle's spelling: daily@HH:MM+MIN, weekly@D@HH:MM+MIN, cron@HH:MM+MIN.
PeriodSpec spec_of(const std::string& text) {
  const auto plus = text.rfind('+');
  const auto length = Millis{minutes{std::stoi(text.substr(plus + 1))}};
  const auto colon = text.rfind(':', plus);
  const int hh = std::stoi(text.substr(colon - 2, 2));
  const int mm = std::stoi(text.substr(colon + 1, 2));
  const Millis time_of_day = Millis{hours{hh}} + Millis{minutes{mm}};
  PeriodSpec spec;
  spec.name = "w";
  if (text.rfind("cron@", 0) == 0) {
    spec.kind = PeriodKind::custom;
    spec.cron = std::make_shared<const CronSchedule>(
        CronSchedule::parse(std::to_string(mm) + " " + std::to_string(hh) + " * * *"));
    spec.window = PeriodWindow{Millis{0}, length};
  } else if (text.rfind("weekly@", 0) == 0) {
    spec.kind = PeriodKind::weekly;
    const int day = text[7] - '0';
    spec.window = PeriodWindow{Millis{hours{24 * (day - 1)}} + time_of_day, length};
  } else {
    spec.kind = PeriodKind::daily;
    spec.window = PeriodWindow{time_of_day, length};
  }
  return spec;
}

struct Probe {
  std::string zone;
  std::string spec;
  Instant t;
};

std::vector<std::string> run_oracle(const std::vector<Probe>& probes) {
  const std::string input =
      testing::TempDir() + "bk_window_oracle_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream out(input);
    for (const Probe& p : probes) out << p.zone << ' ' << p.spec << ' ' << to_epoch_ms(p.t) << '\n';
  }
  const std::string dir = std::string(BK_SOURCE_DIR) + "/tests/core";
  const std::string cmd = "cd '" + dir + "' && python3 window_oracle.py < '" + input + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + cmd);
  std::string output;
  char buf[65536];
  for (std::size_t n = 0; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  const int status = pclose(pipe);
  std::remove(input.c_str());
  if (status != 0)
    throw std::runtime_error("oracle failed (status " + std::to_string(status) + ")");
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What period_containing (or, between windows, next_period) says, in the oracle's words.
std::string ours(const Probe& p) {
  const PeriodSpec spec = spec_of(p.spec);
  const auto& zone = tz(p.zone.c_str());
  try {
    const Period w = period_containing(spec, zone, p.t);
    // The id names the window again (period_from_id), and reads at t answer it.
    const auto again = period_from_id(spec, zone, w.id);
    if (!again || !(*again == w)) return "id " + w.id + " does not name the window again";
    if (!(period_latest(spec, zone, p.t) == w)) return "period_latest differs inside";
    return "in " + std::to_string(to_epoch_ms(w.start)) + " " + std::to_string(to_epoch_ms(w.end));
  } catch (const RefusedError&) {
    const Period next = next_period(spec, zone, p.t);
    const Period last = period_latest(spec, zone, p.t);
    if (!(last.end <= p.t)) return "period_latest is not a window that ended";
    return "out " + std::to_string(to_epoch_ms(next.start));
  }
}

const char* const kZones[] = {"UTC",
                              "Europe/Berlin",
                              "America/New_York",
                              "Australia/Lord_Howe",
                              "America/Santiago",
                              "Pacific/Chatham"};
const char* const kSpecs[] = {"daily@18:00+60",  "daily@22:00+240",     "daily@02:30+60",
                              "daily@01:30+120", "weekly@6@00:00+2880", "weekly@7@22:00+360",
                              "cron@18:00+60",   "cron@02:30+60",       "cron@23:00+180",
                              "cron@12:00+2000"};

// Every UTC offset change of the zone in [from, to).
std::vector<Instant> transitions(const date::time_zone& zone, Instant from, Instant to) {
  std::vector<Instant> out;
  auto info = zone.get_info(from);
  while (info.end < to) {
    const auto next = zone.get_info(info.end);
    if (next.offset != info.offset) out.push_back(std::chrono::time_point_cast<Millis>(info.end));
    info = next;
  }
  return out;
}

TEST(WindowOracle, RandomInstantsAndDstChangesAgree) {
  const Instant from = at("2024-01-01T00:00:00Z"), to = at("2028-01-01T00:00:00Z");
  std::mt19937_64 rng(20261128);
  std::uniform_int_distribution<std::int64_t> pick(to_epoch_ms(from), to_epoch_ms(to) - 1);
  std::vector<Probe> probes;
  for (const char* zone : kZones) {
    for (const char* spec : kSpecs) {
      for (int i = 0; i < 60; ++i) probes.push_back({zone, spec, from_epoch_ms(pick(rng))});
      for (const Instant t : transitions(tz(zone), from, to)) {
        for (const int m : {-150, -90, -61, -30, -1, 0, 1, 30, 59, 61, 90, 150}) {
          probes.push_back({zone, spec, t + Millis{minutes{m}}});
        }
      }
    }
  }
  // The first and last millisecond of each window found.
  const std::size_t random_ones = probes.size();
  for (std::size_t i = 0; i < random_ones; i += 7) {
    const Probe p = probes[i];
    const Period w = period_latest(spec_of(p.spec), tz(p.zone.c_str()), p.t);
    probes.push_back({p.zone, p.spec, w.start});
    probes.push_back({p.zone, p.spec, w.end - Millis{1}});
    probes.push_back({p.zone, p.spec, w.end});
  }
  const auto oracle = run_oracle(probes);
  ASSERT_EQ(oracle.size(), probes.size());
  int failures = 0;
  for (std::size_t i = 0; i < probes.size() && failures < 20; ++i) {
    const std::string got = ours(probes[i]);
    if (got != oracle[i]) {
      ++failures;
      ADD_FAILURE() << probes[i].spec << " in " << probes[i].zone << " at "
                    << format_rfc3339(probes[i].t) << ": got \"" << got << "\", oracle \""
                    << oracle[i] << "\"";
    }
  }
  EXPECT_EQ(failures, 0);
}

// ------------------------------------------------------------------ explicit expectations

TEST(WindowExplicit, HappyHourAcrossMidnightHasTheIdOfTheDayItStarts) {
  const PeriodSpec late = spec_of("daily@22:00+240");  // 22:00 to 02:00
  const auto& berlin = tz("Europe/Berlin");
  const Period w = period_containing(late, berlin, at("2026-11-28T00:30:00Z"));  // 01:30 local
  EXPECT_EQ(w.id, "2026-11-27");
  EXPECT_EQ(w.start, at("2026-11-27T22:00:00+01:00"));
  EXPECT_EQ(w.end, at("2026-11-28T02:00:00+01:00"));
  EXPECT_EQ(period_containing(late, berlin, at("2026-11-28T22:00:00+01:00")).id, "2026-11-28");
  EXPECT_THROW(period_containing(late, berlin, at("2026-11-28T02:00:00+01:00")), RefusedError);
}

TEST(WindowExplicit, AWeekendThatSpansTheFallBackIsFortyNineHours) {
  const PeriodSpec weekend = spec_of("weekly@6@00:00+2880");  // sat 00:00 to mon 00:00
  const Period w = period_containing(weekend, tz("Europe/Berlin"), at("2026-10-25T12:00:00Z"));
  EXPECT_EQ(w.id, "2026-W43");
  EXPECT_EQ(w.start, at("2026-10-24T00:00:00+02:00"));
  EXPECT_EQ(w.end, at("2026-10-26T00:00:00+01:00"));
  EXPECT_EQ(w.end - w.start, Millis{hours{49}});
}

TEST(WindowExplicit, AWindowInTheSpringGapStartsWhenTheClockJumps) {
  // 02:30-03:30 local on 2026-03-29 in Berlin: 02:00-03:00 does not exist.
  const PeriodSpec night = spec_of("daily@02:30+60");
  const Period w = period_containing(night, tz("Europe/Berlin"), at("2026-03-29T01:10:00Z"));
  EXPECT_EQ(w.start, at("2026-03-29T03:00:00+02:00"));
  EXPECT_EQ(w.end, at("2026-03-29T03:30:00+02:00"));
}

TEST(WindowExplicit, BetweenWindowsWritesAreRefusedNamingTheNextStartAndReadsGetTheLast) {
  const PeriodSpec hour = spec_of("cron@18:00+60");
  const auto& ny = tz("America/New_York");
  const Instant noon = at("2026-11-28T12:00:00-05:00");
  try {
    period_containing(hour, ny, noon);
    ADD_FAILURE() << "an instant between windows has a period";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("next window starts at 2026-11-28T23:00:00.000Z"),
              std::string::npos)
        << e.what();
  }
  const Period last = period_latest(hour, ny, noon);
  EXPECT_EQ(last.id, "2026-11-27T18:00");
  EXPECT_EQ(last.end, at("2026-11-27T19:00:00-05:00"));
  EXPECT_EQ(next_period(hour, ny, noon).id, "2026-11-28T18:00");
  PeriodFinder finder(hour, ny);
  EXPECT_EQ(finder.containing(at("2026-11-28T18:30:00-05:00")).id, "2026-11-28T18:00");
  EXPECT_THROW(finder.containing(at("2026-11-28T19:00:00-05:00")), RefusedError);
}

TEST(WindowExplicit, ACronWindowLongerThanTheCycleStopsAtTheNextFiring) {
  const PeriodSpec hour = spec_of("cron@12:00+2000");
  const Period w = period_containing(hour, tz("UTC"), at("2026-11-28T13:00:00Z"));
  EXPECT_EQ(w.end, at("2026-11-29T12:00:00Z"));
}

TEST(WindowExplicit, PeriodFromIdGivesTheWindowAndRefusesOthers) {
  const PeriodSpec weekend = spec_of("weekly@6@00:00+2880");
  const auto w = period_from_id(weekend, tz("UTC"), "2026-W48");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start, at("2026-11-28T00:00:00Z"));
  EXPECT_EQ(w->end, at("2026-11-30T00:00:00Z"));
  EXPECT_FALSE(period_from_id(weekend, tz("UTC"), "2026-11-28"));
}

}  // namespace
}  // namespace bk
