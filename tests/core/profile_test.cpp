// What a member profile may be: names and metadata objects at and past their limits.
#include "core/profile.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

TEST(Profile, NamesAreOneTo128BytesOfUtf8WithoutNul) {
  EXPECT_FALSE(display_name_problem("Ann"));
  EXPECT_FALSE(display_name_problem(std::string(128, 'a')));
  EXPECT_FALSE(display_name_problem("Zoë 🏆"));
  EXPECT_EQ(display_name_problem(""), "name is empty");
  EXPECT_EQ(display_name_problem(std::string(129, 'a')), "name is 129 bytes, more than 128");
  EXPECT_EQ(display_name_problem(std::string("a\0b", 3)), "name contains a NUL byte at offset 1");
  EXPECT_EQ(display_name_problem("a\xc3"), "name is not valid UTF-8");
  EXPECT_EQ(display_name_problem("\xed\xa0\x80"), "name is not valid UTF-8");  // a surrogate
}

TEST(Profile, MetadataIsACompactedJsonObjectOfAtMost2KiB) {
  std::string compact;
  EXPECT_FALSE(metadata_problem("{ \"b\" : [1, 2],\n \"a\": {\"x\": null} }", compact));
  EXPECT_EQ(compact, R"({"a":{"x":null},"b":[1,2]})");  // one line: JSON lines embed it
  EXPECT_FALSE(metadata_problem("{}", compact));
  EXPECT_EQ(compact, "{}");
  const std::string at_limit = R"({"s":")" + std::string(2039, 'x') + "\"}";
  ASSERT_EQ(at_limit.size(), 2047U);
  EXPECT_FALSE(metadata_problem(at_limit + " ", compact));
  EXPECT_EQ(metadata_problem(at_limit + "  ", compact), "meta is 2049 bytes, more than 2048");
  for (const char* not_object : {"[]", "1", "\"s\"", "null", "true"}) {
    EXPECT_EQ(metadata_problem(not_object, compact), "meta is not a JSON object") << not_object;
  }
  EXPECT_EQ(metadata_problem(R"({"a": ["\u0000"]})", compact),
            "meta holds a NUL character (\\u0000)");
  EXPECT_EQ(metadata_problem(R"({"\u0000": 1})", compact), "meta holds a NUL character (\\u0000)");
  for (const char* bad :
       {"", "{", "{\"a\":}", "{} {}", "{\"a\": \"\xc3\"}", R"({"a": "\ud800"})"}) {
    const auto problem = metadata_problem(bad, compact);
    ASSERT_TRUE(problem) << bad;
    EXPECT_EQ(problem->rfind("meta is not valid JSON: ", 0), 0U) << *problem;
  }
}

// PostgreSQL's jsonb gives an object back with its keys reordered and spaced, and a negative
// zero as 0.0: read back, it is the text Redis keeps.
TEST(Profile, MetadataFromJsonbReadsBackAsTheTextRedisKeeps) {
  std::string compact;
  ASSERT_FALSE(
      metadata_problem(R"({"team": "green", "level": 25, "x": [1.5, -0.0, 1e2]})", compact));
  EXPECT_EQ(compact, R"({"level":25,"team":"green","x":[1.5,0.0,100.0]})");
  // What jsonb prints for it.
  EXPECT_EQ(compact_metadata(R"({"x": [1.5, 0.0, 100.0], "team": "green", "level": 25})"), compact);
  EXPECT_EQ(compact_metadata(compact), compact);
  EXPECT_EQ(
      compact_metadata(R"({"\u00e9": "\u00e9\u0001", "big": 123456789012345678901234567890})"),
      R"({"big":1.2345678901234568e+29,"é":"é\u0001"})");
  // Not an object (never stored): unchanged.
  EXPECT_EQ(compact_metadata("[1, 2]"), "[1, 2]");
  EXPECT_EQ(compact_metadata("{"), "{");
}

}  // namespace
}  // namespace bk
