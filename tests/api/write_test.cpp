// The score write's pure parts (api/write.h): the Idempotency-Key header, the request's
// fingerprint, the Content-Type a write needs, and each refusal's status.
#include "api/write.h"

#include <gtest/gtest.h>

#include "core/time.h"

namespace bk::api {
namespace {

TEST(IdempotencyKeyHeader, AStringOrTheBareCharacters) {
  EXPECT_EQ(idempotency_key(""), std::nullopt);
  EXPECT_EQ(idempotency_key("\"8e03978e-40d5\""), "8e03978e-40d5");
  EXPECT_EQ(idempotency_key("8e03978e-40d5"), "8e03978e-40d5");
  EXPECT_EQ(idempotency_key(R"("a\"b\\c")"), R"(a"b\c)");
  EXPECT_EQ(idempotency_key(std::string(255, 'k')), std::string(255, 'k'));
}

TEST(IdempotencyKeyHeader, AnythingElseIsA400) {
  for (const std::string& bad :
       std::vector<std::string>{"\"\"", "a b", "\"a b\"", "a\"b", "caf\xc3\xa9", "\"\t\""}) {
    EXPECT_THROW(idempotency_key(bad), HttpError) << bad;
  }
  EXPECT_THROW(idempotency_key(std::string(256, 'k')), HttpError);
}

service::Update update(std::int64_t value) {
  return service::Update{"pts", "ann", value, std::nullopt, ""};
}

TEST(Fingerprint, TheSameRequestTheSameFingerprintAnotherAnother) {
  service::Update a = update(10), b = update(10), c = update(11);
  keyed(a, std::string("k"));
  keyed(b, std::string("k"));
  keyed(c, std::string("k"));
  EXPECT_EQ(a.event_id, "k");
  EXPECT_EQ(a.fingerprint.size(), 32U);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_NE(a.fingerprint, c.fingerprint);
  service::Update named = update(10), timed = update(10), other = update(10);
  named.name = "Ann";
  timed.at = from_epoch_ms(1);
  other.member = "bob";
  for (service::Update* u : {&named, &timed, &other}) {
    keyed(*u, std::string("k"));
    EXPECT_NE(u->fingerprint, a.fingerprint);
  }
}

TEST(Fingerprint, NoKeyNoFingerprintAndTheBodyIdIsTheKey) {
  service::Update plain = update(1);
  keyed(plain, std::nullopt);
  EXPECT_TRUE(plain.fingerprint.empty());
  service::Update with_id = update(1);
  with_id.event_id = "k";
  keyed(with_id, std::nullopt);
  service::Update with_header = update(1);
  keyed(with_header, std::string("k"));
  EXPECT_EQ(with_id.fingerprint, with_header.fingerprint);
  service::Update both = update(1);
  both.event_id = "k";
  EXPECT_NO_THROW(keyed(both, std::string("k")));
  both.event_id = "other";
  EXPECT_THROW(keyed(both, std::string("k")), HttpError);
}

TEST(WriteContentType, JsonWithParametersElse415) {
  Request r{"POST", "/v1/boards/b/members/m/scores", "", "{}"};
  for (const char* good :
       {"application/json", "Application/JSON; charset=utf-8", "application/json "}) {
    r.content_type = good;
    EXPECT_NO_THROW(require_json(r)) << good;
  }
  for (const char* bad : {"", "text/plain", "application/jsonx", "application/json-seq"}) {
    r.content_type = bad;
    try {
      require_json(r);
      ADD_FAILURE() << bad;
    } catch (const HttpError& e) {
      EXPECT_EQ(e.status, 415) << bad;
    }
  }
}

TEST(RefusalStatus, AReusedKeyIsA422) {
  EXPECT_EQ(refusal_status(service::Refusal::key_reused), 422);
  EXPECT_EQ(refusal_status(service::Refusal::closed), 409);
  EXPECT_EQ(refusal_status(service::Refusal::banned), 403);
}

}  // namespace
}  // namespace bk::api
