// Idempotency keys' fingerprints (hot/idempotency.h).
#include "hot/idempotency.h"

#include "embedded/hot_lua.h"
#include "hot/keys.h"
#include "hot/protocol.h"
#include "redis/error.h"

namespace bk::hot {

Claimed parse_claims(const redis::Reply& reply, std::size_t count) {
  Claimed out;
  if (reply.is_error()) {
    if (redis::classify_reply_error(reply.str) == redis::ErrorClass::transient) {
      redis::throw_reply_error(reply.str);
    }
    out.error = reply.str;
    return out;
  }
  if (reply.type != redis::Reply::Type::array || reply.elements.size() != count) {
    throw redis::ReplyError("idempotency_claim.lua: expected " + std::to_string(count) +
                            " results");
  }
  for (const redis::Reply& r : reply.elements) {
    const std::int64_t v = r.as_int();
    if (v < 0 || v > 2) throw redis::ReplyError("idempotency_claim.lua: unexpected result");
    out.claims.push_back(v == 1 ? Claim::first : v == 2 ? Claim::same : Claim::reused);
  }
  return out;
}

Idempotency::Idempotency(std::string key_prefix)
    : prefix_(std::move(key_prefix)), claim_(embedded::hot_lua::idempotency_claim_lua) {}

std::vector<Claimed> Idempotency::claim(redis::Connection& conn,
                                        const std::vector<ClaimBatch>& batches) {
  std::vector<std::pair<redis::Args, redis::Args>> calls;
  for (const ClaimBatch& b : batches) {
    // The id buckets' numbering, looked up one bucket further back and kept one bucket
    // longer: a fingerprint outlives its event id, so a key is never taken for new while
    // its id still makes the update a duplicate.
    const protocol::IdBuckets ids = protocol::id_buckets(b.now, b.dedupe_window);
    const std::int64_t width =
        std::max<std::int64_t>(1, b.dedupe_window.count() / protocol::kBucketsPerWindow);
    const BoardKeys keys(prefix_, b.board);
    redis::Args k, a;
    for (const std::int64_t bucket : ids.lookup) k.push_back(keys.fingerprints(bucket));
    k.push_back(keys.fingerprints(ids.write - protocol::kBucketsPerWindow - 1));
    a.push_back(std::to_string(ids.ttl.count() + width));
    for (const auto& [key, fingerprint] : b.keys) {
      a.push_back(key);
      a.push_back(fingerprint);
    }
    calls.emplace_back(std::move(k), std::move(a));
  }
  std::vector<Claimed> out;
  if (calls.empty()) return out;
  const std::vector<redis::Reply> replies = claim_.eval_pipelined(conn, calls);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    out.push_back(parse_claims(replies[i], batches[i].keys.size()));
  }
  return out;
}

}  // namespace bk::hot
