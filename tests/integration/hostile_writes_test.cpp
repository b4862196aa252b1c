// The hostile sweep of serve's writes, with the real binary, Redis and PostgreSQL: malformed
// score writes (wrong types, deep nesting, huge numbers, NaN and Infinity, -0, 2^53+1, numbers
// in strings, unknown fields, NUL and invalid UTF-8 in the member and the name, metadata over
// 2 KiB, a body over the limit, no Content-Type; NUL and other control characters in an id or
// an Idempotency-Key, each a 400 naming it) and malformed batches (1,001 events, events
// that are no object or lack a board or member, a body over 1 MiB...) sent as raw bytes, each
// answered a JSON 4xx with nothing applied while serve keeps answering.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "harness.h"
#include "raw_http.h"
#include "served.h"
#include "write_fixture.h"

namespace bk {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using namespace std::string_literals;
using test::kReader;
using test::kWriter;
using test::Served;

using HostileWritesTest = test::WriteApiTest;

constexpr auto kAnswerWithin = 10000ms;  // generous: a loaded 2-core machine

struct Case {
  std::string what;
  std::string request;  // sent as it is
};

// A POST of `body` to `target` with a write token; `head` replaces the Content-Type line
// (e.g. "" for none), `extra` adds header lines.
std::string post(const std::string& target, const std::string& body, const std::string& extra = "",
                 const std::string& head = "Content-Type: application/json\r\n") {
  return "POST " + target + " HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer " + kWriter + "\r\n" +
         head + extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string scores_of(const std::string& member) {
  return "/v1/boards/pts/members/" + member + "/scores";
}

// A write of `body` for member "ann".
Case write_of(const std::string& what, const std::string& body) {
  return {what, post(scores_of("ann"), body)};
}

std::string nested(int depth, const std::string& inner) {
  return std::string(static_cast<std::size_t>(depth), '[') + inner +
         std::string(static_cast<std::size_t>(depth), ']');
}

std::vector<Case> wrong_types() {
  return {
      write_of("value a string", R"({"value": "10"})"),
      write_of("value true", R"({"value": true})"),
      write_of("value null", R"({"value": null})"),
      write_of("value an array", R"({"value": [10]})"),
      write_of("value an object", R"({"value": {"n": 10}})"),
      write_of("value a fraction", R"({"value": 1.5})"),
      write_of("value with an exponent", R"({"value": 1e3})"),
      write_of("value -0", R"({"value": -0})"),
      write_of("value -0.0", R"({"value": -0.0})"),
      write_of("at true", R"({"value": 1, "at": true})"),
      write_of("at an object", R"({"value": 1, "at": {}})"),
      write_of("at a fraction", R"({"value": 1, "at": 1764072000000.5})"),
      write_of("at -0", R"({"value": 1, "at": -0})"),
      write_of("at not a time", R"({"value": 1, "at": "yesterday"})"),
      write_of("id a number", R"({"value": 1, "id": 41})"),
      write_of("name a number", R"({"value": 1, "name": 7})"),
      write_of("metadata an array", R"({"value": 1, "metadata": [1, 2]})"),
      write_of("metadata a string", R"({"value": 1, "metadata": "{}"})"),
      write_of("no value", R"({"name": "Ann"})"),
  };
}

std::vector<Case> numbers() {
  return {
      write_of("value 2^53+1", R"({"value": 9007199254740993})"),
      write_of("value -(2^53+1)", R"({"value": -9007199254740993})"),
      write_of("value 2^63", R"({"value": 9223372036854775808})"),
      write_of("value -(2^63+1)", R"({"value": -9223372036854775809})"),
      write_of("value 1e400", R"({"value": 1e400})"),
      write_of("value of 5,000 digits", "{\"value\": " + std::string(5000, '9') + "}"),
      write_of("value NaN", R"({"value": NaN})"),
      write_of("value Infinity", R"({"value": Infinity})"),
      write_of("value -Infinity", R"({"value": -Infinity})"),
      write_of("value \"NaN\"", R"({"value": "NaN"})"),
      write_of("value \"Infinity\"", R"({"value": "Infinity"})"),
      write_of("value 0x10", R"({"value": 0x10})"),
      write_of("value 010", R"({"value": 010})"),
      write_of("value +1", R"({"value": +1})"),
      write_of("at \"1764072000000\"", R"({"value": 1, "at": "1764072000000"})"),
      write_of("at 2^64", R"({"value": 1, "at": 18446744073709551616})"),
  };
}

std::vector<Case> fields_and_shapes() {
  const std::string big_metadata = R"({"blob": ")" + std::string(2100, 'x') + "\"}";
  return {
      write_of("an unknown field", R"({"value": 1, "score": 2})"),
      write_of("Value capitalised", R"({"Value": 1})"),
      write_of("a board field", R"({"value": 1, "board": "pts"})"),
      write_of("metadata over 2 KiB", R"({"value": 1, "metadata": )" + big_metadata + "}"),
      write_of("metadata 9 deep", R"({"value": 1, "metadata": {"a": )" + nested(8, "1") + "}}"),
      write_of("a body 4,000 deep", nested(4000, "")),
      write_of("metadata 3,000 deep",
               R"({"value": 1, "metadata": {"a": )" + nested(3000, "") + "}}"),
      write_of("an empty body", ""),
      write_of("null", "null"),
      write_of("an array", R"([{"value": 1}])"),
      write_of("a string", R"("value")"),
      write_of("JSON cut off", R"({"value": 1)"),
      write_of("two documents", R"({"value": 1}{"value": 1})"),
      write_of("a trailing comma", R"({"value": 1,})"),
      write_of("a comment", R"({"value": 1 /* one */})"),
      write_of("single quotes", R"({'value': 1})"),
      write_of("a form body", "value=1"),
      write_of("UTF-16", "{\0\"\0v\0\"\0:\0\x31\0}\0"s),
      write_of("a body over 8 KiB", R"({"value": 1, "name": ")" + std::string(9000, 'n') + "\"}"),
  };
}

std::vector<Case> bytes_in_member_and_name() {
  return {
      {"%00 in the member", post(scores_of("a%00b"), R"({"value": 1})")},
      {"%FF in the member", post(scores_of("a%FFb"), R"({"value": 1})")},
      {"overlong UTF-8 in the member", post(scores_of("%C0%AF"), R"({"value": 1})")},
      {"a surrogate in the member", post(scores_of("%ED%A0%80"), R"({"value": 1})")},
      {"a member of 513 bytes", post(scores_of(std::string(513, 'm')), R"({"value": 1})")},
      {"an empty member", post(scores_of(""), R"({"value": 1})")},
      {"a raw NUL in the target", post(scores_of("a\0b"s), R"({"value": 1})")},
      write_of("\\u0000 in the name", R"({"value": 1, "name": "A\u0000nn"})"),
      write_of("a raw NUL in the name", "{\"value\": 1, \"name\": \"A\0nn\"}"s),
      write_of("\\xff in the name", "{\"value\": 1, \"name\": \"A\xffnn\"}"),
      write_of("overlong UTF-8 in the name", "{\"value\": 1, \"name\": \"\xc0\xaf\"}"),
      write_of("a lone surrogate in the name", R"({"value": 1, "name": "\ud800"})"),
      write_of("a name of 300 bytes", R"({"value": 1, "name": ")" + std::string(300, 'n') + "\"}"),
  };
}

// Control characters in an event id (the body's id, or the Idempotency-Key that becomes one):
// refused with a 400 naming the field, by the same rule as ingest's and add's ids.
std::vector<Case> control_characters_in_ids() {
  const std::string body = R"({"value": 1})";
  const std::string target = scores_of("ann");
  return {
      write_of("\\u0000 in the id", R"({"value": 1, "id": "e\u00001"})"),
      write_of("a raw NUL in the id", "{\"value\": 1, \"id\": \"e\0001\"}"s),
      write_of("\\u0001 in the id", R"({"value": 1, "id": "e\u00011"})"),
      write_of("\\n in the id", R"({"value": 1, "id": "e\n1"})"),
      write_of("\\u001b (escape) in the id", R"({"value": 1, "id": "e\u001b[2J"})"),
      write_of("\\u007f (DEL) in the id", R"({"value": 1, "id": "e\u007f1"})"),
      write_of("\\u0085 (a C1 control) in the id", R"({"value": 1, "id": "e\u00851"})"),
      write_of("an id of 513 bytes", R"({"value": 1, "id": ")" + std::string(513, 'i') + "\"}"),
      {"a tab inside the Idempotency-Key", post(target, body, "Idempotency-Key: k\tk\r\n")},
      {"\\x01 in the Idempotency-Key", post(target, body, "Idempotency-Key: k\x01k\r\n")},
      {"an escaped \\x01 in a quoted Idempotency-Key",
       post(target, body, "Idempotency-Key: \"k\\\x01\"\r\n")},
  };
}

std::vector<Case> heads() {
  const std::string body = R"({"value": 1})";
  const std::string target = scores_of("ann");
  return {
      {"no Content-Type", post(target, body, "", "")},
      {"Content-Type text/plain", post(target, body, "", "Content-Type: text/plain\r\n")},
      {"a query parameter", post(target + "?value=5", body)},
      {"Idempotency-Key with \\xff", post(target, body, "Idempotency-Key: k\xff\r\n")},
      {"Idempotency-Key of 256 characters",
       post(target, body, "Idempotency-Key: " + std::string(256, 'k') + "\r\n")},
      {"a second body id unlike the key",
       post(target, R"({"value": 1, "id": "e1"})", "Idempotency-Key: e2\r\n")},
  };
}

std::vector<Case> single_write_cases() {
  std::vector<Case> all;
  for (auto part : {wrong_types, numbers, fields_and_shapes, bytes_in_member_and_name,
                    control_characters_in_ids, heads}) {
    for (Case& c : part()) all.push_back(std::move(c));
  }
  return all;
}

// A batch of `events` (JSON text of each, joined).
Case batch_of(const std::string& what, const std::vector<std::string>& events) {
  std::string list;
  for (const std::string& e : events) list += (list.empty() ? "" : ",") + e;
  return {what, post("/v1/events", "{\"events\": [" + list + "]}")};
}

std::vector<Case> batch_cases() {
  const std::string ok = R"({"board": "pts", "member": "ann", "value": 1})";
  std::vector<std::string> many(1001, ok);
  // A batch of 1 MiB + 1 byte: valid JSON, one event whose name pads it.
  const std::string pad_head =
      R"({"events": [{"board": "pts", "member": "ann", "value": 1, "name": ")";
  const std::string pad_tail = "\"}]}";
  const std::string padded =
      pad_head + std::string(1024 * 1024 + 1 - pad_head.size() - pad_tail.size(), 'n') + pad_tail;
  return {
      batch_of("1,001 events", many),
      batch_of("no events", {}),
      batch_of("a string for a number after a good event",
               {ok, R"({"board": "pts", "member": "bob", "value": "2"})"}),
      batch_of("-0 after a good event", {ok, R"({"board": "pts", "member": "bob", "value": -0})"}),
      batch_of("a number for an event", {ok, "7"}),
      batch_of("null for an event", {ok, "null"}),
      batch_of("an array for an event", {ok, "[" + ok + "]"}),
      batch_of("a string for an event", {ok, "\"ann\""}),
      batch_of("an event without a board", {ok, R"({"member": "bob", "value": 2})"}),
      batch_of("an event without a member", {ok, R"({"board": "pts", "value": 2})"}),
      batch_of("a board of a number", {R"({"board": 7, "member": "bob", "value": 2})"}),
      batch_of("an unknown field in an event", {R"({"board": "pts", "member": "bob", "v": 2})"}),
      batch_of("\\u0000 in an event's id after a good event",
               {ok, R"({"board": "pts", "member": "bob", "value": 2, "id": "e\u00002"})"}),
      batch_of("an event 9 deep",
               {R"({"board": "pts", "member": "bob", "value": 1, "metadata": {"a": )" +
                nested(8, "1") + "}}"}),
      {"events an object", post("/v1/events", R"({"events": {"0": {"board": "pts"}}})")},
      {"a field beside events", post("/v1/events", "{\"events\": [" + ok + "], \"all\": true}")},
      {"a batch over 1 MiB", post("/v1/events", padded)},
      {"a batch without Content-Type", post("/v1/events", "{\"events\": [" + ok + "]}", "", "")},
      {"standings=yes", post("/v1/events?standings=yes", "{\"events\": [" + ok + "]}")},
  };
}

// The records of the board's tops, per period (null for a 404: nothing to read).
json tops(Served& s) {
  json out = json::object();
  for (const char* period : {"daily", "weekly"}) {
    const test::Answer top = s.get(std::string("/v1/boards/pts/") + period + "/top?limit=10",
                                   {{"Authorization", "Bearer " + kReader}});
    EXPECT_TRUE(top.status == 200 || top.status == 404) << top.text;
    out[period] = top.status == 200 ? top.body.at("records") : json(nullptr);
  }
  return out;
}

// Sends each case; each must be a 4xx JSON error that applied nothing, and serve answers on.
void sweep(Served& s, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const json before = tops(s);
    const auto a = test::raw_exchange(s.port(), c.request, kAnswerWithin);
    if (!a) {
      ADD_FAILURE() << "no answer";
    } else {
      EXPECT_GE(a->status, 400) << a->head << "\n" << a->body;
      EXPECT_LT(a->status, 500) << a->head << "\n" << a->body;
      EXPECT_EQ(a->header("content-type").rfind("application/json", 0), 0U) << a->head;
      const json body = json::parse(a->body, nullptr, false);
      EXPECT_TRUE(body.is_object() && body.size() == 1 && body.contains("error") &&
                  body["error"].is_string())
          << a->body;
    }
    EXPECT_EQ(tops(s), before) << "it applied something";
    ASSERT_EQ(s.get("/healthz").status, 200) << "serve is down after it";
  }
}

// Nothing applied: no top has a record.
bool empty(const json& tops) {
  for (const auto& [period, records] : tops.items()) {
    if (!records.is_null() && !records.empty()) return false;
  }
  return true;
}

TEST_F(HostileWritesTest, MalformedWritesEachGetAJson4xxApplyNothingAndServeGoesOn) {
  Served s = serve();
  const std::vector<Case> cases = single_write_cases();
  ASSERT_GE(cases.size(), 30U);
  sweep(s, cases);
  const std::vector<Case> batches = batch_cases();
  ASSERT_GE(batches.size(), 15U);
  sweep(s, batches);
  EXPECT_TRUE(empty(tops(s))) << tops(s).dump();
  // The route works: the sweep was refused for what it sent, not for being a write.
  const auto ok =
      test::raw_exchange(s.port(), post(scores_of("ann"), R"({"value": 3})"), kAnswerWithin);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(s.get("/healthz").status, 200);
}

// Before this, an id holding NUL or another control character was taken (and applied).
TEST_F(HostileWritesTest, AControlCharacterInAnIdIsA400NamingTheField) {
  Served s = serve();
  for (const Case& c : control_characters_in_ids()) {
    SCOPED_TRACE(c.what);
    const auto a = test::raw_exchange(s.port(), c.request, kAnswerWithin);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, 400) << a->body;
    const json body = json::parse(a->body, nullptr, false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << a->body;
    const std::string error = body["error"].get<std::string>();
    const bool named = error.find("Idempotency-Key") != std::string::npos ||
                       error.find("id is refused: event id") != std::string::npos ||
                       error.find("not valid JSON") != std::string::npos ||  // a raw NUL
                       // A raw control byte in any header: the parser refuses the head
                       // before a route, or a header's name, is known.
                       error == "malformed request: bad value";
    EXPECT_TRUE(named) << error;
  }
  const auto batch = test::raw_exchange(
      s.port(),
      post("/v1/events",
           R"({"events": [{"board": "pts", "member": "bob", "value": 2, "id": "e\u00002"}]})"),
      kAnswerWithin);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->status, 400) << batch->body;
  EXPECT_NE(batch->body.find("events[0]: id is refused: event id contains the control character "
                             "U+0000 at byte offset 1"),
            std::string::npos)
      << batch->body;
  EXPECT_TRUE(empty(tops(s))) << tops(s).dump();
}

}  // namespace
}  // namespace bk
