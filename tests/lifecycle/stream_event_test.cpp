// lifecycle/stream_event: what a stream entry's fields become (an update, or a malformed
// entry with the reason its dead letter carries), without a server.
#include "lifecycle/stream_event.h"

#include <gtest/gtest.h>

#include "core/time.h"

namespace bk::lifecycle {
namespace {

const EventOrigin kFirst{"scores", "", false};

StreamFields minimal() {
  return {{"board", "arena"}, {"member", "ann"}, {"value", "42"}};
}

std::string refusal(const StreamFields& fields) {
  const StreamEvent e = parse_stream_event(fields, "5-1", kFirst);
  EXPECT_FALSE(e.update.has_value());
  return e.malformed;
}

TEST(StreamEventTest, TheThreeRequiredFieldsMakeAnUpdate) {
  const StreamEvent e = parse_stream_event(minimal(), "1700000000000-3", kFirst);
  ASSERT_TRUE(e.update.has_value()) << e.malformed;
  EXPECT_TRUE(e.malformed.empty());
  EXPECT_EQ(e.update->board, "arena");
  EXPECT_EQ(e.update->member, "ann");
  EXPECT_EQ(e.update->value, 42);
  EXPECT_FALSE(e.update->at.has_value());
  EXPECT_TRUE(e.update->event_id.empty());
  EXPECT_FALSE(e.update->name.has_value());
  EXPECT_FALSE(e.update->meta.has_value());
}

TEST(StreamEventTest, TheOrderTokenIsTheEntryIdInTheFirstStream) {
  const StreamEvent e = parse_stream_event(minimal(), "17-3", kFirst);
  ASSERT_TRUE(e.update);
  EXPECT_EQ(e.update->order_token, "17-3");
  EXPECT_EQ(e.update->stream, "scores");
  EXPECT_FALSE(e.update->redelivered);
}

TEST(StreamEventTest, TheOrderTokenOfAnotherStreamIsQualifiedByIt) {
  const StreamEvent e = parse_stream_event(minimal(), "17-3", {"bonus", "bonus:", true});
  ASSERT_TRUE(e.update);
  EXPECT_EQ(e.update->order_token, "bonus:17-3");
  EXPECT_EQ(e.update->stream, "bonus");
  EXPECT_TRUE(e.update->redelivered);
}

TEST(StreamEventTest, OptionalFieldsAreTaken) {
  StreamFields f = minimal();
  f.push_back({"id", "evt-9"});
  f.push_back({"name", "Ann"});
  f.push_back({"meta", "{\"lvl\":3}"});
  f.push_back({"at", "1700000000123"});
  const StreamEvent e = parse_stream_event(f, "1-0", kFirst);
  ASSERT_TRUE(e.update) << e.malformed;
  EXPECT_EQ(e.update->event_id, "evt-9");
  EXPECT_EQ(e.update->name, std::optional<std::string>("Ann"));
  EXPECT_EQ(e.update->meta, std::optional<std::string>("{\"lvl\":3}"));
  EXPECT_EQ(e.update->at, std::optional<Instant>(from_epoch_ms(1700000000123)));
}

TEST(StreamEventTest, FieldsMayComeInAnyOrder) {
  const StreamEvent e =
      parse_stream_event({{"value", "-7"}, {"member", "m"}, {"board", "b"}}, "1-0", kFirst);
  ASSERT_TRUE(e.update) << e.malformed;
  EXPECT_EQ(e.update->value, -7);
}

TEST(StreamEventTest, EmptyNameAndMetaArePassedOnForTheUpdateToJudge) {
  StreamFields f = minimal();
  f.push_back({"name", ""});
  f.push_back({"meta", "not json"});
  const StreamEvent e = parse_stream_event(f, "1-0", kFirst);
  ASSERT_TRUE(e.update) << e.malformed;
  EXPECT_EQ(e.update->name, std::optional<std::string>(""));
  EXPECT_EQ(e.update->meta, std::optional<std::string>("not json"));
}

TEST(StreamEventTest, AtInRfc3339IsTaken) {
  StreamFields f = minimal();
  f.push_back({"at", "2026-11-25T10:00:00Z"});
  const StreamEvent e = parse_stream_event(f, "1-0", kFirst);
  ASSERT_TRUE(e.update) << e.malformed;
  EXPECT_EQ(e.update->at, parse_rfc3339("2026-11-25T10:00:00Z"));
}

TEST(StreamEventTest, NegativeEpochMillisecondsAreATime) {
  StreamFields f = minimal();
  f.push_back({"at", "-1000"});
  const StreamEvent e = parse_stream_event(f, "1-0", kFirst);
  ASSERT_TRUE(e.update) << e.malformed;
  EXPECT_EQ(e.update->at, std::optional<Instant>(from_epoch_ms(-1000)));
}

TEST(StreamEventTest, EachMissingRequiredFieldIsNamed) {
  EXPECT_EQ(refusal({{"member", "m"}, {"value", "1"}}), "no board field");
  EXPECT_EQ(refusal({{"board", "b"}, {"value", "1"}}), "no member field");
  EXPECT_EQ(refusal({{"board", "b"}, {"member", "m"}}), "no value field");
  EXPECT_EQ(refusal({}), "no board field");
}

TEST(StreamEventTest, AnUnknownFieldIsRefusedByName) {
  StreamFields f = minimal();
  f.push_back({"score", "5"});
  EXPECT_EQ(refusal(f), "unknown field 'score'");
  EXPECT_EQ(refusal({{"Board", "b"}, {"member", "m"}, {"value", "1"}}), "unknown field 'Board'");
}

TEST(StreamEventTest, AFieldGivenTwiceIsRefusedEvenWithEqualValues) {
  StreamFields f = minimal();
  f.push_back({"value", "42"});
  EXPECT_EQ(refusal(f), "field 'value' appears more than once");
  StreamFields g = minimal();
  g.push_back({"name", "a"});
  g.push_back({"name", "b"});
  EXPECT_EQ(refusal(g), "field 'name' appears more than once");
}

TEST(StreamEventTest, AValueThatIsNotAWholeNumberIsRefused) {
  for (const std::string bad :
       {"", "1.5", "12abc", " 12", "12 ", "+12", "0x10", "1e3", "9223372036854775808", "abc"}) {
    EXPECT_EQ(refusal({{"board", "b"}, {"member", "m"}, {"value", bad}}),
              "value '" + bad + "' is not a whole number")
        << bad;
  }
}

TEST(StreamEventTest, ValuesAtTheLimitsOfInt64AreTaken) {
  for (const auto& [text, n] :
       {std::pair<std::string, std::int64_t>{"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"0", 0},
        {"-0", 0},
        {"007", 7}}) {
    const StreamEvent e =
        parse_stream_event({{"board", "b"}, {"member", "m"}, {"value", text}}, "1-0", kFirst);
    ASSERT_TRUE(e.update) << text << ": " << e.malformed;
    EXPECT_EQ(e.update->value, n) << text;
  }
}

TEST(StreamEventTest, ATimeThatIsNeitherFormIsRefused) {
  for (const std::string bad : {"", "yesterday", "2026-11-25", "1.5", "12ms",
                                "2026-13-01T00:00:00Z", "99999999999999999999"}) {
    StreamFields f = minimal();
    f.push_back({"at", bad});
    EXPECT_EQ(refusal(f), "at '" + bad + "' is neither RFC 3339 nor epoch milliseconds") << bad;
  }
}

TEST(StreamEventTest, TheFirstProblemInFieldOrderIsTheOneReported) {
  EXPECT_EQ(refusal({{"value", "x"}, {"color", "red"}}), "value 'x' is not a whole number");
  EXPECT_EQ(refusal({{"color", "red"}, {"value", "x"}}), "unknown field 'color'");
  // A field problem comes before a missing field.
  EXPECT_EQ(refusal({{"member", "m"}, {"member", "n"}}), "field 'member' appears more than once");
}

TEST(StreamEventTest, FieldNamesAreBinarySafe) {
  StreamFields f = minimal();
  f.push_back({std::string("bo\0ard", 6), "x"});
  EXPECT_EQ(refusal(f), "unknown field '" + std::string("bo\0ard", 6) + "'");
}

TEST(StreamEventTest, TheMalformedReasonAndLabelAreWhatDeadLettersCarry) {
  EXPECT_EQ(malformed_reason("no board field"), "malformed event: no board field");
  EXPECT_EQ(kMalformedLabel, "malformed");
}

}  // namespace
}  // namespace bk::lifecycle
