// CronSchedule: parsing, firings on a zone's wall clock (DST gaps and repeats), the day
// rule, and longest_gap. Brute-force references check the day-by-day search.
#include "core/cron.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <random>
#include <set>
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

std::string show(const std::optional<Instant>& t) {
  return t ? format_rfc3339(*t) : std::string("nullopt");
}

// ---------------------------------------------------------------------------- parsing

TEST(CronParse, AcceptsTheDocumentedForms) {
  for (const char* expr :
       {"* * * * *", "0 18 * * 5", "*/15 0-6,18-23 1,15 1-12/2 1-5", "5/10 * * * *", "0 0 * * 7",
        "  0   0 * * 0  ", "0\t0\t*\t*\t*", "0 0 1-31 * 0-7", "59 23 31 12 6", "00 07 01 01 *",
        "0-59/1 */1 */31 */12 */7"}) {
    EXPECT_NO_THROW(CronSchedule::parse(expr)) << expr;
  }
  EXPECT_EQ(CronSchedule::parse("0 18 * * 5").text(), "0 18 * * 5");
}

std::string parse_error(const std::string& expr) {
  try {
    CronSchedule::parse(expr);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no UsageError>";
}

TEST(CronParse, OutOfRangeMessageNamesFieldAndText) {
  EXPECT_EQ(parse_error("0 25 * * 5"),
            "cron \"0 25 * * 5\": hour field \"25\" is out of range 0-23");
  EXPECT_EQ(parse_error("0 0,24 * * *"),
            "cron \"0 0,24 * * *\": hour field \"0,24\": \"24\" is out of range 0-23");
}

TEST(CronParse, RejectsBadExpressionsNamingTheField) {
  struct Case {
    const char* expr;
    const char* field;  // the field's name, or "5 fields" for a wrong field count
    const char* text;   // the offending text quoted in the message
  };
  const Case cases[] = {
      {"60 * * * *", "minute field", "\"60\""},
      {"-1 * * * *", "minute field", "\"-1\""},
      {"*/0 * * * *", "minute field", "\"*/0\""},
      {"*/60 * * * *", "minute field", "\"*/60\""},
      {"0/ * * * *", "minute field", "\"0/\""},
      {"1-2-3 * * * *", "minute field", "\"1-2-3\""},
      {"0 24 * * *", "hour field", "\"24\""},
      {"0 5-3 * * *", "hour field", "\"5-3\""},
      {"0 1,,2 * * *", "hour field", "\"1,,2\""},
      {"0 1, * * *", "hour field", "\"1,\""},
      {"0 ? * * *", "hour field", "\"?\""},
      {"0 0 0 * *", "day-of-month field", "\"0\""},
      {"0 0 32 * *", "day-of-month field", "\"32\""},
      {"0 0 L * *", "day-of-month field", "\"L\""},
      {"0 0 1W * *", "day-of-month field", "\"1W\""},
      {"0 0 * 0 *", "month field", "\"0\""},
      {"0 0 * 13 *", "month field", "\"13\""},
      {"0 0 * JAN *", "month field", "\"JAN\""},
      {"0 0 * 1-jun *", "month field", "\"1-jun\""},
      {"0 0 * * 8", "day-of-week field", "\"8\""},
      {"0 0 * * MON", "day-of-week field", "\"MON\""},
      {"0 0 * * 1/0", "day-of-week field", "\"1/0\""},
      {"0 0 * * 5#2", "day-of-week field", "\"5#2\""},
      {"0 0 * * * *", "5 fields", "got 6"},
      {"0 0 * *", "5 fields", "got 4"},
      {"", "5 fields", "got 0"},
      {"@daily", "5 fields", "got 1"},
      {"0 0 99999999999999999999 * *", "day-of-month field", "\"99999999999999999999\""},
  };
  for (const Case& c : cases) {
    const std::string msg = parse_error(c.expr);
    EXPECT_NE(msg.find(std::string("cron \"") + c.expr + "\""), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.field), std::string::npos) << c.expr << " -> " << msg;
    EXPECT_NE(msg.find(c.text), std::string::npos) << c.expr << " -> " << msg;
  }
}

// ------------------------------------------------------------------- basic firings (UTC)

TEST(CronFirings, WeeklyCupInShanghai) {
  const auto& sh = tz("Asia/Shanghai");
  const auto cup = CronSchedule::parse("0 18 * * 5");
  const Instant t = at("2026-11-22T12:00:00+08:00");
  EXPECT_EQ(show(cup.last_firing_at_or_before(sh, t)), "2026-11-20T10:00:00.000Z");
  EXPECT_EQ(show(cup.next_firing_after(sh, t)), "2026-11-27T10:00:00.000Z");
  // At a firing: it is the last at-or-before, and next is strictly after.
  const Instant firing = at("2026-11-20T18:00:00+08:00");
  EXPECT_EQ(cup.last_firing_at_or_before(sh, firing), firing);
  EXPECT_EQ(cup.next_firing_after(sh, firing), at("2026-11-27T18:00:00+08:00"));
  EXPECT_EQ(cup.last_firing_at_or_before(sh, firing - Millis{1}), at("2026-11-13T18:00:00+08:00"));
  EXPECT_EQ(cup.next_firing_after(sh, firing - Millis{1}), firing);
}

TEST(CronFirings, CustomPeriodContaining) {
  const auto& sh = tz("Asia/Shanghai");
  PeriodSpec spec{PeriodKind::custom, "cup",
                  std::make_shared<CronSchedule>(CronSchedule::parse("0 18 * * 5"))};
  const Period p = period_containing(spec, sh, at("2026-11-22T12:00:00+08:00"));
  EXPECT_EQ(p.id, "2026-11-20T18:00");
  EXPECT_EQ(p.start, at("2026-11-20T18:00:00+08:00"));
  EXPECT_EQ(p.end, at("2026-11-27T18:00:00+08:00"));
  EXPECT_EQ(period_from_id(spec, sh, "2026-11-20T18:00"), p);
  EXPECT_EQ(period_from_id(spec, sh, "2026-11-21T18:00"), std::nullopt);  // not a firing
  EXPECT_EQ(period_from_id(spec, sh, "2026-11-20T18:01"), std::nullopt);
  EXPECT_EQ(period_containing(spec, sh, p.end).id, "2026-11-27T18:00");
  EXPECT_EQ(period_containing(spec, sh, p.end - Millis{1}), p);
  EXPECT_EQ(longest_period(spec, sh), hours{24 * 7 + 3});
}

TEST(CronFirings, StepsAndLists) {
  const auto& utc = tz("UTC");
  const auto s = CronSchedule::parse("5/20 10 * * *");  // 10:05, 10:25, 10:45
  EXPECT_EQ(s.next_firing_after(utc, at("2026-01-01T10:05:00Z")), at("2026-01-01T10:25:00Z"));
  EXPECT_EQ(s.next_firing_after(utc, at("2026-01-01T10:45:00Z")), at("2026-01-02T10:05:00Z"));
  EXPECT_EQ(s.last_firing_at_or_before(utc, at("2026-01-01T10:04:59.999Z")),
            at("2025-12-31T10:45:00Z"));
  const auto m = CronSchedule::parse("0 0 1 */5 *");  // Jan, Jun, Nov
  EXPECT_EQ(m.next_firing_after(utc, at("2026-01-01T00:00:00Z")), at("2026-06-01T00:00:00Z"));
  EXPECT_EQ(m.next_firing_after(utc, at("2026-06-01T00:00:00Z")), at("2026-11-01T00:00:00Z"));
  EXPECT_EQ(m.next_firing_after(utc, at("2026-11-01T00:00:00Z")), at("2027-01-01T00:00:00Z"));
  const auto sunday7 = CronSchedule::parse("0 12 * * 7");
  const auto sunday0 = CronSchedule::parse("0 12 * * 0");
  const Instant t = at("2026-11-18T00:00:00Z");  // a Wednesday
  EXPECT_EQ(sunday7.next_firing_after(utc, t), at("2026-11-22T12:00:00Z"));
  EXPECT_EQ(sunday0.next_firing_after(utc, t), at("2026-11-22T12:00:00Z"));
  const auto fri_sun = CronSchedule::parse("0 12 * * 5-7");  // Fri, Sat, Sun
  EXPECT_EQ(fri_sun.next_firing_after(utc, t), at("2026-11-20T12:00:00Z"));
  EXPECT_EQ(fri_sun.next_firing_after(utc, at("2026-11-22T12:00:00Z")), at("2026-11-27T12:00:00Z"));
}

// ------------------------------------------------------------------ the day-of-month/week rule

std::vector<std::string> days_fired(const char* expr, const char* from, int count) {
  const auto& utc = tz("UTC");
  const auto s = CronSchedule::parse(expr);
  std::vector<std::string> out;
  std::optional<Instant> t = at(from);
  for (int i = 0; i < count && t; ++i) {
    t = s.next_firing_after(utc, *t);
    if (t) out.push_back(format_rfc3339(*t).substr(0, 10));
  }
  return out;
}

TEST(CronDays, BothRestrictedMeansEither) {
  // The 13th or any Friday (2026-11-13 is a Friday; 2026-12-13 a Sunday).
  EXPECT_EQ(days_fired("0 0 13 * 5", "2026-11-01T00:00:00Z", 8),
            (std::vector<std::string>{"2026-11-06", "2026-11-13", "2026-11-20", "2026-11-27",
                                      "2026-12-04", "2026-12-11", "2026-12-13", "2026-12-18"}));
  EXPECT_EQ(days_fired("0 0 13 * *", "2026-11-01T00:00:00Z", 2),
            (std::vector<std::string>{"2026-11-13", "2026-12-13"}));
  EXPECT_EQ(days_fired("0 0 * * 5", "2026-11-01T00:00:00Z", 2),
            (std::vector<std::string>{"2026-11-06", "2026-11-13"}));
  // The month still has to match: the 1st or Mondays of February only.
  EXPECT_EQ(days_fired("0 0 1 2 1", "2027-01-01T00:00:00Z", 5),
            (std::vector<std::string>{"2027-02-01", "2027-02-08", "2027-02-15", "2027-02-22",
                                      "2028-02-01"}));
}

TEST(CronDays, StarStepDoesNotRestrict) {
  // As in Vixie cron, a day field starting with '*' is unrestricted, so the other day
  // field and it must both match: odd days of the month that are Fridays.
  EXPECT_EQ(days_fired("0 0 */2 * 5", "2026-11-01T00:00:00Z", 4),
            (std::vector<std::string>{"2026-11-13", "2026-11-27", "2026-12-11", "2026-12-25"}));
  // A range covering all days is a restriction: every day of the month, so every day.
  EXPECT_EQ(days_fired("0 0 1-31 * 5", "2026-11-01T00:00:00Z", 3),
            (std::vector<std::string>{"2026-11-02", "2026-11-03", "2026-11-04"}));
}

TEST(CronDays, NeverFiring) {
  const auto& utc = tz("UTC");
  for (const char* expr : {"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"}) {
    const auto s = CronSchedule::parse(expr);
    EXPECT_EQ(s.next_firing_after(utc, at("2026-01-01T00:00:00Z")), std::nullopt) << expr;
    EXPECT_EQ(s.last_firing_at_or_before(utc, at("2026-01-01T00:00:00Z")), std::nullopt) << expr;
    PeriodSpec spec{PeriodKind::custom, "never", std::make_shared<CronSchedule>(s)};
    EXPECT_THROW(period_containing(spec, utc, at("2026-01-01T00:00:00Z")), RefusedError);
    EXPECT_GE(s.longest_gap(utc), hours{24 * 365 * 4});  // conservative, not 0
  }
}

TEST(CronDays, LeapDaysAcrossACentury) {
  const auto& utc = tz("UTC");
  const auto s = CronSchedule::parse("0 0 29 2 *");
  EXPECT_EQ(s.next_firing_after(utc, at("2026-01-01T00:00:00Z")), at("2028-02-29T00:00:00Z"));
  EXPECT_EQ(s.last_firing_at_or_before(utc, at("2028-02-28T00:00:00Z")),
            at("2024-02-29T00:00:00Z"));
  // 2100 is not a leap year: 2096 to 2104.
  EXPECT_EQ(s.next_firing_after(utc, at("2096-03-01T00:00:00Z")), at("2104-02-29T00:00:00Z"));
  EXPECT_EQ(s.last_firing_at_or_before(utc, at("2104-02-28T00:00:00Z")),
            at("2096-02-29T00:00:00Z"));
  EXPECT_EQ(s.longest_gap(utc), hours{24 * (366 + 365 * 3)});
}

// ------------------------------------------------------------------------------ DST

TEST(CronDst, GapFiresAtTheTransition) {
  const auto& ny = tz("America/New_York");
  const auto s = CronSchedule::parse("30 2 * * *");
  // 2026-03-08 02:00 EST jumps to 03:00 EDT at 07:00Z; 02:30 does not exist.
  EXPECT_EQ(show(s.next_firing_after(ny, at("2026-03-08T00:00:00-05:00"))),
            "2026-03-08T07:00:00.000Z");
  EXPECT_EQ(show(s.next_firing_after(ny, at("2026-03-08T07:00:00Z"))), "2026-03-09T06:30:00.000Z");
  EXPECT_EQ(show(s.last_firing_at_or_before(ny, at("2026-03-08T07:00:00Z"))),
            "2026-03-08T07:00:00.000Z");
  EXPECT_EQ(show(s.last_firing_at_or_before(ny, at("2026-03-08T06:59:59.999Z"))),
            "2026-03-07T07:30:00.000Z");
  // 02:00, 02:30 (both in the gap) and 03:00 are one instant; it counts once.
  const auto multi = CronSchedule::parse("0,30 2,3 * * *");
  EXPECT_EQ(show(multi.next_firing_after(ny, at("2026-03-08T01:00:00-05:00"))),
            "2026-03-08T07:00:00.000Z");
  EXPECT_EQ(show(multi.next_firing_after(ny, at("2026-03-08T07:00:00Z"))),
            "2026-03-08T07:30:00.000Z");
  EXPECT_EQ(show(multi.last_firing_at_or_before(ny, at("2026-03-08T07:29:59Z"))),
            "2026-03-08T07:00:00.000Z");
}

TEST(CronDst, RepeatedHourFiresOnce) {
  const auto& ny = tz("America/New_York");
  const auto s = CronSchedule::parse("30 1 * * *");
  // 2026-11-01 01:00-02:00 happens twice (EDT then EST); 01:30 fires at the first one.
  EXPECT_EQ(show(s.next_firing_after(ny, at("2026-11-01T00:00:00-04:00"))),
            "2026-11-01T05:30:00.000Z");
  EXPECT_EQ(show(s.next_firing_after(ny, at("2026-11-01T05:30:00Z"))), "2026-11-02T06:30:00.000Z");
  // During the second 01:xx, the last firing is still the first 01:30.
  EXPECT_EQ(show(s.last_firing_at_or_before(ny, at("2026-11-01T06:45:00Z"))),
            "2026-11-01T05:30:00.000Z");
  EXPECT_EQ(show(s.next_firing_after(ny, at("2026-11-01T06:15:00Z"))), "2026-11-02T06:30:00.000Z");
  // Every minute of 01:xx: in the second 01:xx the latest firing is the first 01:59.
  const auto hour1 = CronSchedule::parse("* 1 * * *");
  EXPECT_EQ(show(hour1.last_firing_at_or_before(ny, at("2026-11-01T06:30:00Z"))),
            "2026-11-01T05:59:00.000Z");
  EXPECT_EQ(show(hour1.next_firing_after(ny, at("2026-11-01T05:59:00Z"))),
            "2026-11-02T06:00:00.000Z");
}

TEST(CronDst, SantiagoMidnightTransitions) {
  const auto& scl = tz("America/Santiago");
  const auto midnight = CronSchedule::parse("0 0 * * *");
  // 2026-09-06 00:00 -04 does not exist (clocks go to 01:00 -03): fires at 04:00Z.
  EXPECT_EQ(show(midnight.next_firing_after(scl, at("2026-09-05T12:00:00-04:00"))),
            "2026-09-06T04:00:00.000Z");
  EXPECT_EQ(show(midnight.next_firing_after(scl, at("2026-09-06T04:00:00Z"))),
            "2026-09-07T03:00:00.000Z");
  // 2026-04-04 24:00 -03 goes back to 23:00 -04: 23:30 on the 4th happens twice.
  const auto late = CronSchedule::parse("30 23 * * *");
  EXPECT_EQ(show(late.last_firing_at_or_before(scl, at("2026-04-05T03:45:00Z"))),
            "2026-04-05T02:30:00.000Z");
  EXPECT_EQ(show(late.next_firing_after(scl, at("2026-04-05T02:30:00Z"))),
            "2026-04-06T03:30:00.000Z");
  EXPECT_EQ(show(midnight.last_firing_at_or_before(scl, at("2026-04-05T03:59:59Z"))),
            "2026-04-04T03:00:00.000Z");
  EXPECT_EQ(show(midnight.next_firing_after(scl, at("2026-04-05T03:59:59Z"))),
            "2026-04-05T04:00:00.000Z");
}

// All firings whose local time lies in [from, to) (local dates), by brute force over every
// minute: each matching wall time mapped with choose::earliest, deduplicated and sorted.
std::vector<Instant> brute_force_firings(const std::set<int>& mins, const std::set<int>& hrs,
                                         const std::set<int>& doms, const std::set<int>& months,
                                         const std::set<int>& dows, bool dom_star, bool dow_star,
                                         const date::time_zone& zone, date::local_days from,
                                         date::local_days to) {
  std::set<Instant> out;
  for (date::local_days d = from; d < to; d += date::days{1}) {
    const date::year_month_day ymd{d};
    const int dom = static_cast<int>(static_cast<unsigned>(ymd.day()));
    const int dow = static_cast<int>(date::weekday{d}.c_encoding());
    if (!months.count(static_cast<int>(static_cast<unsigned>(ymd.month())))) continue;
    const bool dom_ok = doms.count(dom) > 0;
    const bool dow_ok = dows.count(dow) > 0 || (dow == 0 && dows.count(7) > 0);
    if (!dom_star && !dow_star ? !(dom_ok || dow_ok) : !(dom_ok && dow_ok)) continue;
    for (int h : hrs) {
      for (int m : mins) {
        const auto local = date::local_time<minutes>{d.time_since_epoch()} + hours{h} + minutes{m};
        out.insert(
            std::chrono::time_point_cast<Millis>(zone.to_sys(local, date::choose::earliest)));
      }
    }
  }
  return {out.begin(), out.end()};
}

std::string list(const std::set<int>& values) {
  std::string s;
  for (int v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

// The windows of local dates the random schedules below are checked in: around DST
// transitions (a 30-minute one on Lord Howe, a 45-minute zone) and in UTC.
struct Window {
  const char* zone;
  date::local_days from;
};
const Window kWindows[] = {
    {"America/New_York", date::local_days{date::year{2026} / 3 / 1}},
    {"America/New_York", date::local_days{date::year{2026} / 10 / 25}},
    {"America/Santiago", date::local_days{date::year{2026} / 4 / 1}},
    {"America/Santiago", date::local_days{date::year{2026} / 9 / 1}},
    {"Australia/Lord_Howe", date::local_days{date::year{2026} / 4 / 1}},
    {"Australia/Lord_Howe", date::local_days{date::year{2026} / 10 / 1}},
    {"Europe/London", date::local_days{date::year{2026} / 3 / 25}},
    {"Pacific/Chatham", date::local_days{date::year{2026} / 4 / 1}},
    {"UTC", date::local_days{date::year{2027} / 2 / 20}},
};

// A schedule under test: its expression, its zone's name and zone, and the first instant
// checked (40 days of instants from it).
struct Checked {
  const std::string& expr;
  const char* zone_name;
  const date::time_zone& zone;
  Instant lo;
};

// 60 instants from c.lo on (random ones, and ones right at and next to firings): the
// schedule's next and last firings are the reference's.
void expect_firings(const CronSchedule& s, const Checked& c, const std::vector<Instant>& firings,
                    std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> offset(0, 40LL * 24 * 3600 * 1000);
  for (int i = 0; i < 60; ++i) {
    // Random instants, and instants right at and next to firings.
    Instant t = c.lo + Millis{offset(rng)};
    if (i % 3 == 1) {
      auto it = std::lower_bound(firings.begin(), firings.end(), t);
      if (it != firings.end()) t = *it - Millis{i % 2};
    }
    auto next = std::upper_bound(firings.begin(), firings.end(), t);
    auto last = std::upper_bound(firings.begin(), firings.end(), t);
    const std::optional<Instant> want_next =
        next == firings.end() ? std::nullopt : std::optional<Instant>(*next);
    const std::optional<Instant> want_last =
        last == firings.begin() ? std::nullopt : std::optional<Instant>(*std::prev(last));
    ASSERT_EQ(show(s.next_firing_after(c.zone, t)), show(want_next))
        << c.expr << " in " << c.zone_name << " after " << format_rfc3339(t);
    ASSERT_EQ(show(s.last_firing_at_or_before(c.zone, t)), show(want_last))
        << c.expr << " in " << c.zone_name << " at or before " << format_rfc3339(t);
  }
}

// Random schedules (explicit lists, so the reference does not share the parser), checked
// against brute force for random instants in windows around DST transitions and in UTC.
TEST(CronDst, RandomSchedulesAgainstBruteForce) {
  std::mt19937_64 rng(20261122);
  auto pick = [&](int lo, int hi, int max_count) {
    std::set<int> s;
    const int n = std::uniform_int_distribution<int>(1, max_count)(rng);
    for (int i = 0; i < n; ++i) s.insert(std::uniform_int_distribution<int>(lo, hi)(rng));
    return s;
  };
  int rounds = 0;
  for (int round = 0; round < 40; ++round) {
    const Window& w = kWindows[static_cast<std::size_t>(round) % std::size(kWindows)];
    const auto& zone = tz(w.zone);
    const std::set<int> mins = pick(0, 59, 6), hrs = pick(0, 23, 8),
                        months = round % 3 == 0 ? pick(1, 12, 6) : std::set<int>{};
    std::set<int> all_months;
    for (int m = 1; m <= 12; ++m) all_months.insert(m);
    const bool dom_star = round % 2 == 0, dow_star = round % 4 < 2;
    std::set<int> doms, dows;
    if (dom_star) {
      for (int d = 1; d <= 31; ++d) doms.insert(d);
    } else {
      doms = pick(1, 31, 10);
    }
    if (dow_star) {
      for (int d = 0; d <= 6; ++d) dows.insert(d);
    } else {
      dows = pick(0, 7, 3);
    }
    const std::set<int>& ms = months.empty() ? all_months : months;
    const std::string expr = list(mins) + " " + list(hrs) + " " + (dom_star ? "*" : list(doms)) +
                             " " + (months.empty() ? "*" : list(months)) + " " +
                             (dow_star ? "*" : list(dows));
    const auto s = CronSchedule::parse(expr);
    // The reference covers a wide margin of local dates around the window checked.
    const auto firings = brute_force_firings(mins, hrs, doms, ms, dows, dom_star, dow_star, zone,
                                             w.from - date::days{400}, w.from + date::days{440});
    const Instant lo = std::chrono::time_point_cast<Millis>(
        zone.to_sys(date::local_time<minutes>{w.from.time_since_epoch()}));
    const Instant hi = lo + hours{24 * 40};
    // The reference is complete between its first and last firing; a schedule too sparse
    // to bracket the checked instants (or one that never fires) is skipped.
    if (firings.empty() || firings.front() >= lo || firings.back() <= hi) continue;
    ++rounds;
    ASSERT_NO_FATAL_FAILURE(expect_firings(s, {expr, w.zone, zone, lo}, firings, rng));
  }
  EXPECT_GE(rounds, 30);
}

TEST(CronDst, FiringsStrictlyIncreaseThroughAYear) {
  for (const char* name : {"America/New_York", "Australia/Lord_Howe", "America/Santiago"}) {
    const auto& zone = tz(name);
    const auto s = CronSchedule::parse("0,30 0-3,23 * * *");
    Instant t = at("2026-01-01T00:00:00Z");
    std::optional<Instant> previous;
    int n = 0;
    while (t < at("2027-01-01T00:00:00Z")) {
      const auto next = s.next_firing_after(zone, t);
      ASSERT_TRUE(next);
      ASSERT_GT(*next, t);
      ASSERT_EQ(s.last_firing_at_or_before(zone, *next), next);
      if (previous) {
        ASSERT_EQ(s.last_firing_at_or_before(zone, *next - Millis{1}), previous);
      }
      previous = next;
      t = *next;
      ++n;
    }
    // 10 firings a day, minus those that collapse in the spring-forward gap.
    EXPECT_GE(n, 3640) << name;
    EXPECT_LE(n, 3652) << name;
  }
}

// ----------------------------------------------------------------------------- longest_gap

TEST(CronLongestGap, Weekly) {
  const auto s = CronSchedule::parse("0 18 * * 5");
  EXPECT_EQ(s.longest_gap(tz("UTC")), hours{24 * 7});
  EXPECT_EQ(s.longest_gap(tz("Asia/Shanghai")), hours{24 * 7});
  // The week that contains the fall-back has an extra hour.
  EXPECT_EQ(s.longest_gap(tz("America/New_York")), hours{24 * 7 + 1});
  EXPECT_EQ(s.longest_gap(tz("Australia/Lord_Howe")), hours{24 * 7} + minutes{30});
}

TEST(CronLongestGap, WithinDaysAndAcrossMonths) {
  const auto& utc = tz("UTC");
  const auto& ny = tz("America/New_York");
  EXPECT_EQ(CronSchedule::parse("*/15 * * * *").longest_gap(utc), minutes{15});
  // 01:45 EDT to 02:00 EST on the fall-back day.
  EXPECT_EQ(CronSchedule::parse("*/15 * * * *").longest_gap(ny), minutes{75});
  EXPECT_EQ(CronSchedule::parse("* * * * *").longest_gap(ny), minutes{61});
  // Friday 17:00 to Monday 09:00.
  EXPECT_EQ(CronSchedule::parse("0 9-17 * * 1-5").longest_gap(utc), hours{64});
  // Busy half the year, silent the other half: June 30 23:59 to January 1 00:00.
  EXPECT_EQ(CronSchedule::parse("* * * 1-6 *").longest_gap(utc), hours{24 * 184} + minutes{1});
  EXPECT_EQ(CronSchedule::parse("0 0 1 * *").longest_gap(utc), hours{24 * 31});
  // November (30 days) gains an hour, but no 31-day month holds a fall-back.
  EXPECT_EQ(CronSchedule::parse("0 0 1 * *").longest_gap(ny), hours{24 * 31});
  EXPECT_EQ(CronSchedule::parse("0 0 1 11 *").longest_gap(ny), hours{24 * 366});  // 2027-28
}

TEST(CronLongestGap, IsFast) {
  const auto& ny = tz("America/New_York");
  for (const char* expr : {"0 18 * * 5", "* * * * *", "0 0 31 2 *"}) {
    const auto s = CronSchedule::parse(expr);
    s.longest_gap(ny);  // warm the zone
    const auto begin = std::chrono::steady_clock::now();
    s.longest_gap(ny);
    const auto took = std::chrono::steady_clock::now() - begin;
    EXPECT_LT(took, std::chrono::milliseconds{100}) << expr;
  }
}

}  // namespace
}  // namespace bk
