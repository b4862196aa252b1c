// hot/protocol: what BoardScripts sends the update script and how it reads the replies, without
// a server. The integration suite runs the same calls against Redis.
#include "hot/protocol.h"

#include <gtest/gtest.h>

#include "replies.h"

#include "core/error.h"
#include "redis/error.h"

namespace bk::hot {
namespace {

using redis::Reply;
using namespace bk::hot::test;

Instant at_ms(std::int64_t ms) {
  return from_epoch_ms(ms);
}

PeriodSlot slot(const std::string& name, const std::string& id, std::int64_t start_ms,
                std::int64_t end_ms) {
  PeriodSlot s;
  s.period_name = name;
  s.period.id = id;
  s.period.start = at_ms(start_ms);
  s.period.end = at_ms(end_ms);
  s.layout.order = Order::desc;
  s.layout.tie = TieBreak::earliest;
  s.layout.min_points = 0;
  s.layout.max_points = 1000;
  s.layout.span_units = 86'400'000;
  s.layout.resolution = Millis{1};
  s.expire_at = at_ms(end_ms + 1000);
  return s;
}

HotBatch two_slot_batch() {
  HotBatch b;
  b.board = "arena";
  b.policy = Policy::best;
  b.slots = {slot("daily", "2026-11-25", 1000, 2000), slot("weekly", "2026-W48", 500, 9000)};
  b.now = at_ms(10'000);
  b.dedupe_window = Millis{4000};
  return b;
}

HotEvent event(const std::string& member, std::int64_t value, std::int64_t at) {
  HotEvent e;
  e.member = member;
  e.value = value;
  e.at = at_ms(at);
  e.slots = {0, 1};
  e.cold = {{}, {}};
  return e;
}

TEST(ProtocolTest, IdBucketsCoverTheWindowAndOneBucketAhead) {
  // Window 4000 ms: buckets of 1000 ms. At 10'250 the current bucket is 10.
  const auto b = protocol::id_buckets(at_ms(10'250), Millis{4000});
  EXPECT_EQ(b.write, 10);
  EXPECT_EQ(b.lookup, (std::vector<std::int64_t>{10, 11, 9, 8, 7, 6}));
  // Bucket 10 ends at 11'000 and lives a window more: until 15'000.
  EXPECT_EQ(b.ttl, Millis{15'000 - 10'250});
  // The oldest bucket looked up (6, written during [6000, 7000)) lives until 11'000: still
  // alive at 10'250; bucket 5 died at 10'000.
  // Negative clocks round down, not toward zero.
  EXPECT_EQ(protocol::id_buckets(at_ms(-1), Millis{4000}).write, -1);
}

TEST(ProtocolTest, TheCommonEventIsTwoArguments) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500)};
  const auto c = protocol::marshal_update("lb", b, true);
  // No event id, no stream: only the board's keys and three per slot.
  EXPECT_EQ(
      c.keys,
      (redis::Args{"lb:{arena}:periods", "lb:{arena}:synced", "lb:{arena}:held", "lb:{arena}:bans",
                   "lb:{arena}:daily:2026-11-25", "lb:{arena}:daily:2026-11-25:meta",
                   "lb:{arena}:daily:2026-11-25:stale", "lb:{arena}:weekly:2026-W48",
                   "lb:{arena}:weekly:2026-W48:meta", "lb:{arena}:weekly:2026-W48:stale"}));
  const redis::Args header(c.args.begin(), c.args.begin() + 19);
  EXPECT_EQ(header, (redis::Args{"b", "d", "e", "0", "1000", "2", "1", "0", "1", "0", "0", "0", "0",
                                 "1", "0", "p", "", "1500", ""}));
  const redis::Args daily(c.args.begin() + 19, c.args.begin() + 25);
  EXPECT_EQ(daily, (redis::Args{"daily:2026-11-25", "1000", "86400000", "1", "3000", "2000"}));
  // Every slot, nothing known of the cold tier, no id, no token: the member, then its value
  // and time packed: 0 ms after at_base (1500) * 2^32 + (5 + 2^31).
  const redis::Args ev(c.args.begin() + 31, c.args.end());
  EXPECT_EQ(ev, (redis::Args{"ann", "2147483653"}));
}

TEST(ProtocolTest, ValuesAndTimesArePackedWhereEveryEventOfTheCallFits) {
  HotBatch b = two_slot_batch();
  b.events = {event("bob", 2147483647, 1600 + 1048575), event("ann", -2147483648, 1600)};
  auto c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(15), "p");
  EXPECT_EQ(c.args.at(17), "1600");  // the earliest time
  // bob: (2^20 - 1) ms * 2^32 + 2^32 - 1 = 2^52 - 1; ann: 0 ms and -2^31 + 2^31.
  EXPECT_EQ(c.args.at(32), "4503599627370495");
  EXPECT_EQ(c.args.at(34), "0");
  // One time 2^20 ms after the earliest: every event of the call sends value and time.
  b.events[0].at = at_ms(1600 + 1048576);
  c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(15), "");
  EXPECT_EQ(c.args.at(17), "");
  const redis::Args ev(c.args.begin() + 31, c.args.end());
  EXPECT_EQ(ev, (redis::Args{"bob", "2147483647", "1050176", "ann", "-2147483648", "1600"}));
  // A value beyond 32 bits, either way, does the same.
  b.events[0].at = at_ms(1600);
  b.events[0].value = 2147483648;
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(15), "");
  b.events[0].value = 2147483647;
  b.events[1].value = -2147483649;
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(15), "");
}

TEST(ProtocolTest, AFieldOneEventNeedsIsSentForEveryEventOfTheCall) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500), event("bob", 2, 1600)};
  b.events[1].order_token = "1700000000000-3";
  b.events[1].cold[0] = {ColdValue::State::absent, 0, "3"};
  const auto c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(15), "pts");
  EXPECT_EQ(c.args.at(16), "");  // not every event has a token: one token per event
  const redis::Args ev(c.args.begin() + 31, c.args.end());
  // bob's 2 points 100 ms after ann's time: 100 * 2^32 + 2 + 2^31.
  EXPECT_EQ(ev, (redis::Args{"ann", "2147483653", "", "*",  //
                             "bob", "431644213250", "1700000000000-3", "2", "1", "a3", "2", "?"}));
}

TEST(ProtocolTest, ColdValuesAndPartialSlotsAreSpelledOut) {
  HotBatch b = two_slot_batch();
  HotEvent e = event("bob", -3, 1600);
  e.slots = {1};
  e.cold = {{ColdValue::State::present, 42, "7"}};
  HotEvent f = event("cy", 1, 1700);
  f.cold[0] = {ColdValue::State::absent, 0, "3"};
  b.events = {e, f};
  const auto c = protocol::marshal_update("lb", b, false);
  EXPECT_EQ(c.args.at(8), "0");  // no cold tier
  EXPECT_EQ(c.args.at(15), "ps");
  const redis::Args rest(c.args.begin() + 31, c.args.end());
  // Packed from 1600: bob -3 + 2^31 at 0 ms; cy 1 + 2^31 at 100 ms.
  EXPECT_EQ(rest, (redis::Args{"bob", "2147483645", "1", "2", "p7:42",  //
                               "cy", "431644213249", "2", "1", "a3", "2", "?"}));
}

TEST(ProtocolTest, EventIdsBringTheBoardsIdBuckets) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500)};
  b.events[0].event_id = "e-1";
  const auto c = protocol::marshal_update("lb", b, true);
  // now 10'000, window 4000: buckets 10, 11, 9, 8, 7, 6 follow the board's four keys.
  const redis::Args ids(c.keys.begin() + 4, c.keys.begin() + 10);
  EXPECT_EQ(ids, (redis::Args{"lb:{arena}:ids:10", "lb:{arena}:ids:11", "lb:{arena}:ids:9",
                              "lb:{arena}:ids:8", "lb:{arena}:ids:7", "lb:{arena}:ids:6"}));
  EXPECT_EQ(c.keys.at(10), "lb:{arena}:daily:2026-11-25");
  EXPECT_EQ(c.args.at(9), "6");      // nbuckets
  EXPECT_EQ(c.args.at(10), "5000");  // the current bucket lives until 15'000
  EXPECT_EQ(c.args.at(15), "pi");
  EXPECT_EQ(c.args.at(33), "e-1");
}

TEST(ProtocolTest, StreamEntriesBringTheInFlightMarkers) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500)};
  b.events[0].order_token = "1700000000000-3";
  b.stream = "lb:events";
  b.acknowledged_below_ms = 1699999999000;
  auto c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.keys.at(4), "lb:{arena}:inflight:lb:events");
  EXPECT_EQ(c.args.at(11), "1");
  EXPECT_EQ(c.args.at(12), "1699999999000");
  EXPECT_EQ(c.args.at(14), "1700000000000");  // the call's marker: its highest entry ms
  // Tokens of coalesced events and of other streams (a qualifier that may hold digits and
  // dashes): the highest ms of them all; a token that is no entry id counts 0.
  b.events.push_back(event("bob", 1, 1500));
  b.events[1].order_token = ",!,s-9:1700000000007-0,s-9:1700000000005-1";
  b.events.push_back(event("cy", 1, 1500));
  b.events[2].order_token = "not-an-id";
  c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(14), "1700000000007");
  b.events.resize(1);
  b.check_inflight = true;
  c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(11), "2");
  // Without an order token no event can leave a marker: no key.
  b.events[0].order_token.clear();
  c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.keys.at(4), "lb:{arena}:daily:2026-11-25");
  EXPECT_EQ(c.args.at(11), "0");
}

TEST(ProtocolTest, EveryEventWithTheTokenOfOneEntrySendsThemJoinedOnce) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500), event("bob", 2, 1600)};
  b.events[0].order_token = "1700000000000-3";
  b.events[1].order_token = "s-9:1700000000001-0";
  b.stream = "lb:events";
  auto c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(15), "pj");
  EXPECT_EQ(c.args.at(16), "1700000000000-3,s-9:1700000000001-0");
  EXPECT_EQ(c.args.at(14), "1700000000001");
  const redis::Args ev(c.args.begin() + 31, c.args.end());
  EXPECT_EQ(ev, (redis::Args{"ann", "2147483653", "bob", "431644213250"}));
  // A coalesced event (its token holds the separator) sends every token on its own.
  b.events[1].order_token = ",1700000000001-0,1700000000002-0";
  c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(15), "pt");
  EXPECT_EQ(c.args.at(16), "");
  EXPECT_EQ(c.args.at(33), "1700000000000-3");
}

TEST(ProtocolTest, ACallOfNewEntriesNamesItsLowestEntryIdForTheScriptToLookFor) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500), event("bob", 2, 1600), event("cy", 1, 1700)};
  b.events[0].order_token = "1700000000002-0";
  b.events[1].order_token = "1700000000001-7";
  b.events[2].order_token = "1700000000001-12";
  b.stream = "lb:events";
  auto c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(11), "1");
  // Ordered as Redis orders ids (7 before 12), whatever the order of the events.
  EXPECT_EQ(c.args.at(18), "1700000000001-7");
  // Qualified tokens (another stream of the list) and coalesced ones count by their ids.
  b.events[1].order_token = ",!,s-9:1700000000000-5,s-9:1700000000003-0";
  c = protocol::marshal_update("lb", b, true);
  EXPECT_EQ(c.args.at(18), "1700000000000-5");
  // A checked call looks at every marker anyway; a token that is no entry id (a library
  // caller's own) leaves nothing to compare; no stream, no markers.
  b.check_inflight = true;
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(18), "");
  b.check_inflight = false;
  b.events[2].order_token = "order-77";
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(18), "");
  b.events[2].order_token = "1700000000001-12";
  b.stream.clear();
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(18), "");
}

// A call sent again with some of its events keeps every setting of the call.
TEST(ProtocolTest, ABatchWithoutItsEventsKeepsEverySettingOfTheCall) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500), event("bob", 2, 1600)};
  b.events[0].event_id = "e-1";
  b.events[0].order_token = "1700000000000-3";
  b.hold = true;
  b.stream = "lb:events";
  b.check_inflight = true;
  b.acknowledged_below_ms = 1699999999000;
  b.want_points = false;
  HotBatch again = b.without_events();
  EXPECT_TRUE(again.events.empty());
  again.events = b.events;
  const auto original = protocol::marshal_update("lb", b, true);
  const auto copy = protocol::marshal_update("lb", again, true);
  EXPECT_EQ(copy.keys, original.keys);
  EXPECT_EQ(copy.args, original.args);
}

TEST(ProtocolTest, AppliedRepliesCarryPointsAndTheRehydratedMask) {
  const auto r = protocol::parse_update_reply(array({integer(2), integer(7), integer(-4)}));
  EXPECT_EQ(r.outcome, HotOutcome::applied);
  EXPECT_EQ(r.points, (std::vector<std::int64_t>{7, -4}));
  EXPECT_EQ(r.rehydrated, (std::vector<bool>{false, true}));
}

TEST(ProtocolTest, WithoutPointsAnAppliedEventIsItsMask) {
  HotBatch b = two_slot_batch();
  b.events = {event("ann", 5, 1500)};
  b.want_points = false;
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(13), "0");
  const auto r = protocol::parse_update_reply(integer(2));
  EXPECT_EQ(r.outcome, HotOutcome::applied);
  EXPECT_TRUE(r.points.empty());
  EXPECT_EQ(r.rehydrated, (std::vector<bool>{false, true}));
  EXPECT_TRUE(protocol::parse_update_reply(integer(0)).rehydrated.empty());
}

TEST(ProtocolTest, StatusReplies) {
  EXPECT_EQ(protocol::parse_update_reply(array({str("dup")})).outcome, HotOutcome::duplicate);
  EXPECT_EQ(protocol::parse_update_reply(array({str("blocked")})).outcome, HotOutcome::blocked);
  EXPECT_EQ(protocol::parse_update_reply(array({str("waiting")})).outcome, HotOutcome::waiting);
  EXPECT_EQ(protocol::parse_update_reply(array({str("sync")})).outcome, HotOutcome::needs_sync);
  EXPECT_EQ(protocol::parse_update_reply(array({str("banned")})).outcome, HotOutcome::banned);
  const auto closed = protocol::parse_update_reply(array({str("closed"), str("daily:x")}));
  EXPECT_EQ(closed.outcome, HotOutcome::closed);
  EXPECT_EQ(closed.period, "daily:x");
  const auto expired = protocol::parse_update_reply(array({str("expired"), str("weekly:y")}));
  EXPECT_EQ(expired.outcome, HotOutcome::expired);
  EXPECT_EQ(expired.period, "weekly:y");
  const auto range =
      protocol::parse_update_reply(array({str("range"), str("daily:x"), str("1001")}));
  EXPECT_EQ(range.outcome, HotOutcome::out_of_range);
  EXPECT_EQ(range.refused_points, 1001);
  const auto cold = protocol::parse_update_reply(
      array({str("cold"), integer(2), str("5"), integer(1), str("0")}));
  EXPECT_EQ(cold.outcome, HotOutcome::needs_cold);
  EXPECT_EQ(cold.cold_slots, (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(cold.cold_gens, (std::vector<std::string>{"5", "0"}));
}

TEST(ProtocolTest, ACallWhoseEventsAllAppliedWithoutPointsIsAnsweredByItsEventCount) {
  const auto all = protocol::parse_update_replies(integer(3), 3);
  ASSERT_EQ(all.size(), 3U);
  for (const HotResult& r : all) {
    EXPECT_EQ(r.outcome, HotOutcome::applied);
    EXPECT_TRUE(r.points.empty());
    EXPECT_TRUE(r.rehydrated.empty());
  }
  EXPECT_THROW(protocol::parse_update_replies(integer(2), 3), redis::ReplyError);
}

TEST(ProtocolTest, ACallWhoseEventsAllAppliedWithPointsIsAnsweredByTheirPointsFlat) {
  // Two events of three slots each.
  const auto all =
      protocol::parse_update_replies(array({str("points"), integer(5), integer(6), integer(7),
                                            integer(-1), integer(0), integer(2)}),
                                     2);
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].outcome, HotOutcome::applied);
  EXPECT_EQ(all[0].points, (std::vector<std::int64_t>{5, 6, 7}));
  EXPECT_EQ(all[1].points, (std::vector<std::int64_t>{-1, 0, 2}));
  EXPECT_TRUE(all[1].rehydrated.empty());  // none was
  // Points that do not divide among the events, or none.
  EXPECT_THROW(
      protocol::parse_update_replies(array({str("points"), integer(1), integer(2), integer(3)}), 2),
      redis::ReplyError);
  EXPECT_THROW(protocol::parse_update_replies(array({str("points")}), 1), redis::ReplyError);
  EXPECT_TRUE(protocol::parse_update_replies(array({str("points")}), 0).empty());
}

TEST(ProtocolTest, OtherwiseACallIsAnsweredEventByEvent) {
  const auto each = protocol::parse_update_replies(array({integer(1), array({str("dup")})}), 2);
  ASSERT_EQ(each.size(), 2U);
  EXPECT_EQ(each[0].outcome, HotOutcome::applied);
  EXPECT_EQ(each[0].rehydrated, (std::vector<bool>{true}));
  EXPECT_EQ(each[1].outcome, HotOutcome::duplicate);
  EXPECT_THROW(protocol::parse_update_replies(array({integer(0)}), 2), redis::ReplyError);
  EXPECT_THROW(protocol::parse_update_replies(str("OK"), 1), redis::ReplyError);
}

TEST(ProtocolTest, OnlyACallOfOneEventAsksForStandings) {
  HotBatch b = two_slot_batch();
  b.want_standings = true;
  b.events = {event("ann", 5, 1500)};
  EXPECT_TRUE(protocol::with_standings(b));
  EXPECT_NE(protocol::marshal_update("lb", b, true).args.at(15).find('r'), std::string::npos);
  b.events.push_back(event("bob", 2, 1600));
  EXPECT_FALSE(protocol::with_standings(b));
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(15).find('r'), std::string::npos);
  b.want_standings = false;
  b.events.pop_back();
  EXPECT_EQ(protocol::marshal_update("lb", b, true).args.at(15).find('r'), std::string::npos);
}

TEST(ProtocolTest, AReplyWithStandingsWrapsTheReplyAndGivesOnePerSlot) {
  // Applied with points in two slots, the second rehydrated; the first slot within the hot
  // part, the second beyond it (with its stale set).
  const Reply reply = array({array({array({integer(2), integer(7), integer(9)})}),
                             array({str("120"), integer(3), str("90"), integer(1), integer(1),
                                    str("100"), str("5:2"), integer(0)}),
                             array({str("400"), integer(1000), str("300"), integer(998), integer(1),
                                    str(""), str("6:0"), integer(1), str("ann"), str("zed")})});
  const auto all = protocol::parse_update_replies(reply, 1, true);
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].points, (std::vector<std::int64_t>{7, 9}));
  ASSERT_EQ(all[0].standings.size(), 2U);
  const HotStanding& hot = all[0].standings[0];
  EXPECT_EQ(hot.before, 120);
  EXPECT_EQ(hot.before_better, 3);
  EXPECT_EQ(hot.after, 90);
  EXPECT_EQ(hot.after_better, 1);
  EXPECT_TRUE(hot.spilled);
  EXPECT_EQ(hot.cold_bound, 100);
  EXPECT_EQ(hot.gen, "5:2");
  EXPECT_FALSE(hot.hot_and_stale);
  const HotStanding& beyond = all[0].standings[1];
  EXPECT_FALSE(beyond.cold_bound);
  ASSERT_TRUE(beyond.hot_and_stale);
  EXPECT_EQ(*beyond.hot_and_stale, (std::vector<std::string>{"ann", "zed"}));
  // A member with no score before (new) or after (a duplicate's member that is not hot).
  const auto fresh = protocol::parse_standing(array(
      {str(""), integer(0), str(""), integer(0), integer(0), str(""), str("0:0"), integer(0)}));
  EXPECT_FALSE(fresh.before);
  EXPECT_FALSE(fresh.after);
  EXPECT_FALSE(fresh.spilled);
  // Nothing written ({"sync"}): the reply alone, no standings.
  const auto sync = protocol::parse_update_replies(array({array({array({str("sync")})})}), 1, true);
  EXPECT_EQ(sync.at(0).outcome, HotOutcome::needs_sync);
  EXPECT_TRUE(sync.at(0).standings.empty());
  EXPECT_THROW(protocol::parse_update_replies(integer(1), 1, true), redis::ReplyError);
  EXPECT_THROW(protocol::parse_standing(array({str("1"), integer(0)})), redis::ReplyError);
}

TEST(ProtocolTest, RepliesTheScriptNeverGivesAreErrors) {
  EXPECT_THROW(protocol::parse_update_reply(array({str("maybe")})), redis::ReplyError);
  EXPECT_THROW(protocol::parse_update_reply(array({str("span"), str("daily:x")})), Error);
}

}  // namespace
}  // namespace bk::hot
