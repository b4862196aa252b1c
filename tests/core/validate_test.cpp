// Member ids (1-512 bytes of valid UTF-8 without NUL) and board names.
#include "core/validate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bk {
namespace {

std::string bytes(std::initializer_list<unsigned> list) {
  std::string s;
  for (const unsigned b : list) s.push_back(static_cast<char>(b));
  return s;
}

TEST(MemberProblem, AcceptsValidUtf8) {
  for (const std::string& m : {
           std::string("alice"),
           std::string("a"),
           std::string("user:42"),
           std::string("\xf0\x9f\x98\x80\xf0\x9f\x8f\x86"),  // emoji
           std::string("\xe5\xbc\xa0\xe4\xb8\x89"),          // CJK
           std::string("tab\there"),
           std::string("quote\"s'and\\backslash"),
           std::string("new\nline\r\n"),
           std::string(" spaces "),
           std::string("\x7f"),
           bytes({0xc2, 0x80}),              // U+0080, smallest 2-byte
           bytes({0xdf, 0xbf}),              // U+07FF
           bytes({0xe0, 0xa0, 0x80}),        // U+0800, smallest 3-byte
           bytes({0xed, 0x9f, 0xbf}),        // U+D7FF, just below the surrogates
           bytes({0xee, 0x80, 0x80}),        // U+E000, just above them
           bytes({0xef, 0xbf, 0xbf}),        // U+FFFF
           bytes({0xf0, 0x90, 0x80, 0x80}),  // U+10000, smallest 4-byte
           bytes({0xf4, 0x8f, 0xbf, 0xbf}),  // U+10FFFF, the largest code point
           std::string(512, 'x'),
       }) {
    EXPECT_EQ(member_problem(m), std::nullopt) << m;
  }
  // 512 bytes exactly, in 3-byte characters (170 * 3 + 2 ASCII).
  std::string cjk;
  for (int i = 0; i < 170; ++i) cjk += "\xe4\xb8\xad";
  cjk += "ab";
  ASSERT_EQ(cjk.size(), 512U);
  EXPECT_EQ(member_problem(cjk), std::nullopt);
}

TEST(MemberProblem, RejectsEmptyTooLongAndNul) {
  EXPECT_TRUE(member_problem(""));
  EXPECT_NE(member_problem("")->find("empty"), std::string::npos);
  const auto long_one = member_problem(std::string(513, 'x'));
  ASSERT_TRUE(long_one);
  EXPECT_NE(long_one->find("513"), std::string::npos) << *long_one;
  std::string cjk;
  for (int i = 0; i < 171; ++i) cjk += "\xe4\xb8\xad";  // 513 bytes, 171 characters
  EXPECT_TRUE(member_problem(cjk));
  const auto nul = member_problem(std::string("ab\0cd", 5));
  ASSERT_TRUE(nul);
  EXPECT_NE(nul->find("NUL"), std::string::npos) << *nul;
  EXPECT_TRUE(member_problem(std::string(1, '\0')));
}

TEST(MemberProblem, RejectsInvalidUtf8) {
  const std::string bad[] = {
      bytes({0x80}),                          // lone continuation byte
      "a" + bytes({0xbf}) + "b",              // continuation in the middle
      bytes({0xc0, 0x80}),                    // overlong NUL
      bytes({0xc1, 0xbf}),                    // overlong
      bytes({0xe0, 0x80, 0x80}),              // overlong 3-byte
      bytes({0xe0, 0x9f, 0xbf}),              // overlong U+07FF
      bytes({0xf0, 0x80, 0x80, 0x80}),        // overlong 4-byte
      bytes({0xf0, 0x8f, 0xbf, 0xbf}),        // overlong U+FFFF
      bytes({0xed, 0xa0, 0x80}),              // surrogate U+D800
      bytes({0xed, 0xbf, 0xbf}),              // surrogate U+DFFF
      bytes({0xf4, 0x90, 0x80, 0x80}),        // U+110000
      bytes({0xf5, 0x80, 0x80, 0x80}),        // lead byte beyond U+10FFFF
      bytes({0xf8, 0x88, 0x80, 0x80, 0x80}),  // 5-byte form
      bytes({0xff}),
      bytes({0xfe}),
      bytes({0xe4, 0xb8}),                // truncated 3-byte sequence
      "abc" + bytes({0xf0, 0x9f, 0x98}),  // truncated emoji at the end
      bytes({0xe4, 0x41, 0xad}),          // ASCII inside a sequence
      bytes({0xc3, 0xc3, 0xa9}),          // lead byte followed by a lead byte
  };
  for (const std::string& m : bad) {
    const auto p = member_problem(m);
    ASSERT_TRUE(p) << "accepted invalid bytes of size " << m.size();
    EXPECT_NE(p->find("UTF-8"), std::string::npos) << *p;
  }
  // The offset of the first bad byte is reported.
  const auto at3 = member_problem("abc" + bytes({0x80}));
  ASSERT_TRUE(at3);
  EXPECT_NE(at3->find("offset 3"), std::string::npos) << *at3;
}

TEST(EventIdProblem, TakesUtf8IdsWithoutControlCharacters) {
  for (const std::string& id : std::vector<std::string>{
           "e1", "match-81:ann", "caf\xc3\xa9 \xf0\x9f\x8e\xae", "a b", std::string(512, 'i')}) {
    EXPECT_FALSE(event_id_problem(id)) << id;
  }
}

TEST(EventIdProblem, RefusesControlCharactersNamingThemAndWhere) {
  using namespace std::string_literals;
  EXPECT_EQ(event_id_problem("e\0001"s),
            "event id contains the control character U+0000 at byte offset 1");
  EXPECT_EQ(event_id_problem("ab\n"),
            "event id contains the control character U+000A at byte offset 2");
  EXPECT_EQ(event_id_problem("\x1b[2J"),
            "event id contains the control character U+001B at byte offset 0");
  EXPECT_EQ(event_id_problem("e\x7f"),
            "event id contains the control character U+007F at byte offset 1");
  EXPECT_EQ(event_id_problem("e\xc2\x85"),
            "event id contains the control character U+0085 at byte offset 1");
  EXPECT_FALSE(event_id_problem("e\xc2\xa0")) << "U+00A0 is no control character";
  EXPECT_EQ(event_id_problem(""), "event id is empty");
  EXPECT_EQ(event_id_problem(std::string(513, 'i')), "event id is 513 bytes, more than 512");
  EXPECT_EQ(event_id_problem("e\xff"), "event id is not valid UTF-8 at byte offset 1");
}

TEST(BoardName, Rules) {
  for (const char* ok : {"points", "game:42", "eu-west/daily_v2", "a.b", "A", "x"}) {
    EXPECT_EQ(board_name_problem(ok), std::nullopt) << ok;
    EXPECT_EQ(board_pattern_problem(ok), std::nullopt) << ok;
  }
  EXPECT_EQ(board_name_problem(std::string(128, 'b')), std::nullopt);
  EXPECT_TRUE(board_name_problem(std::string(129, 'b')));
  EXPECT_TRUE(board_name_problem(""));
  for (const char* bad : {"game *", "a b", "a\tb", "a{b}", "a,b", "caf\xc3\xa9", "a#b", "a\"b",
                          "game:*", "a?", "[ab]"}) {
    const auto p = board_name_problem(bad);
    ASSERT_TRUE(p) << bad;
    EXPECT_NE(p->find("board name"), std::string::npos) << *p;
  }
  // Globs allow * ? [ ] but nothing else new.
  for (const char* ok : {"game:*", "a?", "[ab]x", "*"}) {
    EXPECT_EQ(board_pattern_problem(ok), std::nullopt) << ok;
  }
  for (const char* bad : {"", "game *", "a{b}", "a,b"}) {
    EXPECT_TRUE(board_pattern_problem(bad)) << bad;
  }
  EXPECT_TRUE(board_pattern_problem(std::string(129, '*')));
}

TEST(BoardName, GlobMatching) {
  EXPECT_TRUE(board_matches("game:*", "game:42"));
  EXPECT_TRUE(board_matches("game:*", "game:"));
  EXPECT_FALSE(board_matches("game:*", "games:42"));
  EXPECT_TRUE(board_matches("points", "points"));
  EXPECT_FALSE(board_matches("points", "points2"));
  EXPECT_TRUE(board_matches("r?", "r1"));
  EXPECT_FALSE(board_matches("r?", "r12"));
  EXPECT_TRUE(board_matches("[ab]x", "bx"));
  EXPECT_FALSE(board_matches("[ab]x", "cx"));
  EXPECT_TRUE(board_matches("*", "eu/daily"));  // no FNM_PATHNAME: * crosses '/'
}

}  // namespace
}  // namespace bk
