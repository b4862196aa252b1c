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
#include <utility>
#include <vector>

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
  std::int64_t retry_after = 0;      // refused: seconds until the requests asked are taken
  LimitClass of = LimitClass::read;  // the limit this is of (set by RateLimits)
  std::uint64_t whose = 0;           // its bucket's: a token's identity or a member_key
  // Refused because more requests were asked at once than the burst: no wait makes them
  // pass (retry_after 0).
  bool never = false;
};

// One limit's arithmetic, pure: a bucket of `burst` refilled at `per_second`.
class TokenBucket {
 public:
  explicit TokenBucket(RateLimit limit) : limit_(limit) {}
  Bucket full(SteadyTime now) const { return {static_cast<double>(limit_.burst), now}; }
  // The bucket refilled up to `now` (a clock that went back refills nothing).
  Bucket refilled(const Bucket& b, SteadyTime now) const;
  bool is_full(const Bucket& b, SteadyTime now) const;
  // Takes `count` requests from a refilled bucket when it holds them.
  Verdict take(Bucket& refilled, std::int64_t count = 1) const;
  // The verdict of a refilled bucket for `count` requests, nothing taken (allowed: it holds
  // them; never: count is over the burst).
  Verdict look(const Bucket& refilled, std::int64_t count = 1) const;
  std::int64_t burst() const { return limit_.burst; }

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
  // The same verdict, nothing taken and no bucket made, but a refusal counted as admit's:
  // the check before a batch's body, whose cost is known only once it is read.
  std::optional<Verdict> check(Access access, std::uint64_t who);

  // Events of one member in a batch: its member_key and how many.
  using MemberEvents = std::vector<std::pair<std::uint64_t, std::int64_t>>;
  // A batch of `events` writes by `who` (docs/http-api.md, "Batches"): `events` requests
  // from the token's write bucket and, from each member's write_per_member bucket, one per
  // event of that member (`members`, each member once), all taken or none. The verdict:
  // allowed, of the token's bucket (without a write limit, of the member's with the least
  // left); refused, of the bucket that cannot pay (the longest wait: retry_after is when it
  // could), or `never` when one is asked for more than its burst. nullopt: no limit applies.
  std::optional<Verdict> admit_batch(std::uint64_t who, std::int64_t events,
                                     const MemberEvents& members);

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
  // What one request (or batch) asks of one bucket.
  struct Need {
    const TokenBucket* rule = nullptr;
    Key key{};
    std::int64_t count = 1;
    Bucket level{};
    Verdict verdict{};
  };
  enum class Mode { look, check, take };

  std::array<std::optional<TokenBucket>, kLimitClasses> rules_;
  std::size_t max_buckets_;
  Now now_;
  std::array<unsigned char, 32> salt_{};
  std::array<std::atomic<std::int64_t>, kLimitClasses> refused_{};
  mutable std::mutex mu_;
  Map buckets_;
  Map::iterator sweep_;  // the idle sweep's place (valid: the map never rehashes)

  const TokenBucket* rule(LimitClass c) const;
  std::optional<Verdict> decide(Access access, std::uint64_t who, std::uint64_t member, Mode mode);
  // The verdict of `needs` (those with a rule), taken from all of them or none (Mode::take).
  std::optional<Verdict> settle(Need* needs, std::size_t n, Mode mode);
  Bucket& bucket(const Key& key, const Need* keep, std::size_t n, SteadyTime now);
  void sweep(SteadyTime now, std::size_t steps);
  void make_room(const Need* keep, std::size_t n);
};

}  // namespace bk::api
