// The update script's wire format (src/hot/update.lua): the tokens BoardScripts sends in KEYS and
// ARGV and the replies it reads back, named in one place and tested without a server
// (tests/hot/protocol_test.cpp). update.lua's header comment is the other half of this file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "hot/board_scripts.h"
#include "redis/connection.h"

namespace bk::hot::protocol {

// ARGV[1..3]: the board's update policy, order and tie-break.
inline constexpr char kIncrement = 'i';
inline constexpr char kBest = 'b';
inline constexpr char kReplace = 'r';
inline constexpr char kDesc = 'd';
inline constexpr char kAsc = 'a';
inline constexpr char kTieEarliest = 'e';
inline constexpr char kTieLatest = 'l';
inline constexpr char kTieNone = 'n';

// An event's slots: "*" is every slot of the call, in order, nothing known of the cold tier
// (the common event); otherwise a count and (slot, cold) pairs where cold is "?" (not looked
// up), "a<gen>" (absent from the cold tier at spill generation <gen>) or "p<gen>:<encoded>"
// (its cold score).
inline constexpr std::string_view kEverySlot = "*";
// ARGV[16], the optional fields every event of the call carries (after member, value and
// time), a letter each: its event id, its order token, its used slots. A field no event of
// the call needs is left out: "" for the first two, "*" for the slots.
inline constexpr char kFieldEventId = 'i';
inline constexpr char kFieldOrderToken = 't';
inline constexpr char kFieldUsedSlots = 's';
// Instead of kFieldOrderToken: every event has the token of one entry (none coalesced), and
// ARGV[17] holds them joined by kTokenSeparator, in event order (else ARGV[17] is empty).
inline constexpr char kFieldJoinedTokens = 'j';
// Each event's value and time as one number, (at - at_base) * kPackTimeShift + value +
// kPackValueBias, when every event of the call has 0 <= at - at_base < kPackTimeSpan and
// -kPackValueBias <= value < kPackValueBias; ARGV[18] is at_base (else empty). Below 2^52: a
// Lua double holds it exactly.
inline constexpr char kFieldPacked = 'p';
inline constexpr std::int64_t kPackValueBias = std::int64_t{1} << 31;
inline constexpr std::int64_t kPackTimeShift = std::int64_t{1} << 32;
inline constexpr std::int64_t kPackTimeSpan = std::int64_t{1} << 20;
// The call has one event and wants its member's standing in every slot (HotCall::
// want_standings): the reply is {the reply without it, then a standing per slot}.
inline constexpr char kFieldStandings = 'r';
inline constexpr std::string_view kColdUnknown = "?";
inline constexpr char kColdAbsent = 'a';
inline constexpr char kColdPresent = 'p';

// ARGV[12], in-flight markers of stream entries (see HotBatch::stream): none; written for
// every applied event with an order token; written and also checked (the call holds entries
// read again from a pending list, or is sent again after look-ups in PostgreSQL: either way
// another consumer may have applied some of them).
inline constexpr std::string_view kInflightOff = "0";
inline constexpr std::string_view kInflightMark = "1";
inline constexpr std::string_view kInflightCheck = "2";
// ARGV[19], with kInflightMark: the lowest entry id among the call's tokens ("<ms>-<seq>"):
// the script checks the call's entries too when a marker holds an id at or above it (entries
// delivered again as new after the stream's node rolled back: a failover to a replica that
// lacked their delivery, a restart from an older file). Else, or when a token holds no
// entry id (a library caller's own tokens), kFloorNone: nothing to look for.
inline constexpr std::string_view kFloorNone = "";

// Reply statuses (the first element of an event's reply when it was not applied).
inline constexpr std::string_view kDup = "dup";
inline constexpr std::string_view kClosed = "closed";
inline constexpr std::string_view kRange = "range";
inline constexpr std::string_view kCold = "cold";
inline constexpr std::string_view kBlocked = "blocked";
inline constexpr std::string_view kWaiting = "waiting";
inline constexpr std::string_view kSync = "sync";
inline constexpr std::string_view kBanned = "banned";  // the member is banned from the board
inline constexpr std::string_view kSpan = "span";
inline constexpr std::string_view kExpired = "expired";
inline constexpr std::string_view kSplit = "split";
// The first element of a call's reply when every event applied with points and none
// rehydrated: then each event's points per slot, event by event.
inline constexpr std::string_view kAllPoints = "points";
// A coalesced event's order token (HotEvent::order_token) is this separator, then its
// events' tokens each after one more: ",tok1,tok2" (just "," when they have none).
inline constexpr char kTokenSeparator = ',';
// After the leading separator of a coalesced replace: its value changed within the group.
inline constexpr char kForced = '!';

// Idempotency ids live in time buckets of dedupe_window / 4 of the caller's clock: an id is
// written to the current bucket, whose TTL ends dedupe_window after the bucket ends, and
// looked up in the buckets that may still live: the 4 before the current one, the current
// one, and the next one (another process whose clock runs a little ahead may have written
// there). So an id is remembered for at least dedupe_window and at most 1.25x it, and
// Redis holds the ids of at most 1.25 windows per board, whatever the number of periods.
inline constexpr std::int64_t kBucketsPerWindow = 4;
struct IdBuckets {
  std::int64_t write = 0;            // the current bucket
  std::vector<std::int64_t> lookup;  // write first, then the others
  Millis ttl{0};                     // of the write bucket, from now
};
IdBuckets id_buckets(Instant now, Millis window);

// Whether a call of `batch` asks for standings (kFieldStandings): a call of one event only.
bool with_standings(const HotBatch& batch);

// One script call.
struct Call {
  redis::Args keys;
  redis::Args args;
};
// `cold_tier`: the caller can consult the cold tier (see BoardScripts).
Call marshal_update(const std::string& key_prefix, const HotBatch& batch, bool cold_tier);
// The reply for one event. Throws redis::ReplyError for a reply the script never gives, and
// bk::Error for "span" (an event outside its period: a caller bug).
HotResult parse_update_reply(const redis::Reply& reply);
// The replies for a call of `events` events: one per event, the event count alone when
// every event applied without points and none rehydrated, or kAllPoints and the points of
// every event when every event applied with points and none rehydrated. Throws
// redis::ReplyError for any other count. `standings`: the call asked for them
// (with_standings): the reply wraps that, and the standings go to the event's result.
std::vector<HotResult> parse_update_replies(const redis::Reply& reply, std::size_t events,
                                            bool standings = false);
// One slot's standing (update_standing.lua's per-slot array).
HotStanding parse_standing(const redis::Reply& reply);

}  // namespace bk::hot::protocol
