// Idempotency keys of writes (docs/http-api.md, "Idempotency"): a write that carries a key
// (its event id) and a fingerprint of its request is applied once per key within the board's
// dedupe window, as every event id is (update.lua); this part tells a retry (the same
// fingerprint) from another request that reuses the key, which must be refused and not be
// answered as a duplicate. The fingerprints live beside the event ids, in HASHes per time
// bucket (<prefix>:{<board>}:keys:<bucket>), kept a bucket longer than the ids.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

enum class Claim {
  first,   // the key was not held: claimed for this fingerprint
  same,    // held by the same fingerprint: a retry (the update path decides applied/duplicate)
  reused,  // held by another fingerprint: the request must be refused
};

// One board's keyed writes of a call.
struct ClaimBatch {
  std::string board;
  Millis dedupe_window{std::chrono::hours{24}};
  Instant now{};
  std::vector<std::pair<std::string, std::string>> keys;  // key, fingerprint
};

// What one board's claim gave: per key, or the lasting error reply of its call (a bucket key
// of another type), which fails that board's keyed writes only.
struct Claimed {
  std::vector<Claim> claims;  // parallel to ClaimBatch::keys; empty with an error
  std::string error;
};

// Parses one claim script reply for `count` keys: a lasting error reply is Claimed::error, a
// transient one throws (redis::throw_reply_error); a reply the script never gives throws
// redis::ReplyError.
Claimed parse_claims(const redis::Reply& reply, std::size_t count);

class Idempotency {
 public:
  explicit Idempotency(std::string key_prefix);
  // One script call per board, pipelined; results parallel to the batches.
  std::vector<Claimed> claim(redis::Connection& conn, const std::vector<ClaimBatch>& batches);

 private:
  std::string prefix_;
  redis::Script claim_;
};

}  // namespace bk::hot
