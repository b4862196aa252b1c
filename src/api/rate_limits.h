// serve's rate limits (serve.rate_limits, docs/operations.md): a token bucket per token and
// route class (read, write, admin), and for writes optionally per board and member, counted
// in this process's memory. Asked on the server's I/O thread before a body is read, so every
// call holds one mutex for a few hash-map steps and never waits on anything else.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "api/routes.h"
#include "config/config.h"

namespace bk::api {

using SteadyTime = std::chrono::steady_clock::time_point;

// The limits' classes, as metrics and serve.rate_limits name them.
enum class LimitClass : std::size_t { read = 0, write = 1, admin = 2, write_per_member = 3 };
const char* label(LimitClass c);
inline constexpr std::size_t kLimitClasses = 4;

// A bucket: the requests it held at `at` (a fraction: refilled continuously).
struct Bucket {
  double level = 0;
  SteadyTime at{};
};

// What a limit says of one request, as the RateLimit-* headers (IETF httpapi draft) and
// Retry-After give it.
struct Verdict {
  bool allowed = true;
  std::int64_t limit = 0;            // the burst: RateLimit-Limit
  std::int64_t remaining = 0;        // whole requests left now: RateLimit-Remaining
  std::int64_t reset = 0;            // seconds until the bucket is full again: RateLimit-Reset
  std::int64_t retry_after = 0;      // refused: seconds until one request is taken (>= 1)
  LimitClass of = LimitClass::read;  // the limit this is of (set by RateLimits)
};

// One limit's arithmetic, pure: a bucket of `burst` refilled at `per_second`.
class TokenBucket {
 public:
  explicit TokenBucket(RateLimit limit) : limit_(limit) {}
  Bucket full(SteadyTime now) const { return {static_cast<double>(limit_.burst), now}; }
  // The bucket refilled up to `now` (a clock that went back refills nothing).
  Bucket refilled(const Bucket& b, SteadyTime now) const;
  bool is_full(const Bucket& b, SteadyTime now) const;
  // Takes one request from a refilled bucket when it holds one.
  Verdict take(Bucket& refilled) const;
  // The verdict of a refilled bucket, nothing taken (allowed: it holds a request).
  Verdict look(const Bucket& refilled) const;

 private:
  RateLimit limit_;
};

class RateLimits {
 public:
  using Now = std::function<SteadyTime()>;
  // At most this many buckets are kept (one per token and class, one per member written):
  // about 6 MiB.
  static constexpr std::size_t kMaxBuckets = 100'000;

  explicit RateLimits(const RateLimitsConfig& config, std::size_t max_buckets = kMaxBuckets,
                      Now now = std::chrono::steady_clock::now);

  // Whether requests of that class have a limit (a write: per token or per member).
  bool limits(Access access) const;

  // One request of `access` by the caller `who` (a token's identity, api/tokens.h; 0: a read
  // without a token of ours, whose bucket every such read shares), of `member` too for a
  // write (member_key; 0: none). A request is taken from each of its buckets only when every
  // one holds one. The verdict: of the bucket that refused (the longest wait when both did);
  // allowed, of the class's bucket (the member's without one). nullopt: no limit applies.
  std::optional<Verdict> admit(Access access, std::uint64_t who, std::uint64_t member = 0);
  // The same verdict, nothing taken (for the headers of an answer).
  std::optional<Verdict> look(Access access, std::uint64_t who, std::uint64_t member = 0);

  // A member's key for admit: keyed by a secret of this process, so that member names chosen
  // to collide cannot crowd one hash chain.
  std::uint64_t member_key(std::string_view board, std::string_view member) const;

  // Requests refused so far, by class (metrics).
  std::int64_t refused(LimitClass c) const { return refused_[static_cast<std::size_t>(c)].load(); }
  std::size_t buckets() const;

 private:
  struct Key {
    LimitClass limit;
    std::uint64_t id;
    bool operator==(const Key& o) const { return limit == o.limit && id == o.id; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return static_cast<std::size_t>(k.id * 0x9E3779B97F4A7C15ULL) ^
             static_cast<std::size_t>(k.limit);
    }
  };
  using Map = std::unordered_map<Key, Bucket, KeyHash>;

  std::array<std::optional<TokenBucket>, kLimitClasses> rules_;
  std::size_t max_buckets_;
  Now now_;
  std::array<unsigned char, 32> salt_{};
  std::array<std::atomic<std::int64_t>, kLimitClasses> refused_{};
  mutable std::mutex mu_;
  Map buckets_;
  Map::iterator sweep_;  // the idle sweep's place (valid: the map never rehashes)

  std::optional<Verdict> decide(Access access, std::uint64_t who, std::uint64_t member, bool take);
  Bucket& bucket(const Key& key, const Key& keep, SteadyTime now);
  void sweep(SteadyTime now, std::size_t steps);
  void make_room(const Key& keep_a, const Key& keep_b);
};

}  // namespace bk::api
