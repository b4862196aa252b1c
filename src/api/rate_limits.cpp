// serve's rate limits (api/rate_limits.h). Memory stays bounded: every call looks at the next
// two buckets in the map and drops them when full again (a full bucket is what a missing one
// means, so nothing is lost); at kMaxBuckets, the next bucket in that order makes room
// whatever it holds (its caller starts again from a full bucket).
#include "api/rate_limits.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace bk::api {
namespace {

// Fractions of a request lost to floating point do not refuse one.
constexpr double kSlack = 1e-9;

LimitClass class_of(Access access) {
  switch (access) {
    case Access::read:
      return LimitClass::read;
    case Access::write:
      return LimitClass::write;
    case Access::admin:
      return LimitClass::admin;
  }
  return LimitClass::read;
}

std::int64_t whole_seconds_up(double seconds) {
  return seconds <= kSlack ? 0 : static_cast<std::int64_t>(std::ceil(seconds - kSlack));
}

}  // namespace

const char* label(LimitClass c) {
  switch (c) {
    case LimitClass::read:
      return "read";
    case LimitClass::write:
      return "write";
    case LimitClass::admin:
      return "admin";
    case LimitClass::write_per_member:
      return "write_per_member";
  }
  return "";
}

Bucket TokenBucket::refilled(const Bucket& b, SteadyTime now) const {
  if (now <= b.at) return b;
  const double seconds = std::chrono::duration<double>(now - b.at).count();
  return {std::min(static_cast<double>(limit_.burst), b.level + seconds * limit_.per_second), now};
}

bool TokenBucket::is_full(const Bucket& b, SteadyTime now) const {
  return refilled(b, now).level >= static_cast<double>(limit_.burst) - kSlack;
}

Verdict TokenBucket::look(const Bucket& b) const {
  Verdict v;
  v.allowed = b.level >= 1 - kSlack;
  v.limit = limit_.burst;
  v.remaining = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(b.level + kSlack)));
  v.reset = whole_seconds_up((static_cast<double>(limit_.burst) - b.level) / limit_.per_second);
  if (!v.allowed) {
    v.retry_after = std::max<std::int64_t>(1, whole_seconds_up((1 - b.level) / limit_.per_second));
  }
  return v;
}

Verdict TokenBucket::take(Bucket& b) const {
  if (!look(b).allowed) return look(b);
  b.level = std::max(0.0, b.level - 1);
  Verdict v = look(b);
  v.allowed = true;
  v.retry_after = 0;
  return v;
}

RateLimits::RateLimits(const RateLimitsConfig& config, std::size_t max_buckets, Now now)
    : max_buckets_(std::max<std::size_t>(3, max_buckets)), now_(std::move(now)) {
  const std::optional<RateLimit>* limits[kLimitClasses] = {&config.read, &config.write,
                                                           &config.admin, &config.write_per_member};
  for (std::size_t i = 0; i < kLimitClasses; ++i) {
    if (*limits[i]) rules_[i].emplace(**limits[i]);
  }
  std::random_device random;
  for (unsigned char& c : salt_) c = static_cast<unsigned char>(random());
  buckets_.reserve(max_buckets_);  // never rehashed: sweep_ stays valid
  sweep_ = buckets_.end();
}

bool RateLimits::limits(Access access) const {
  return rules_[static_cast<std::size_t>(class_of(access))] ||
         (access == Access::write &&
          rules_[static_cast<std::size_t>(LimitClass::write_per_member)]);
}

std::uint64_t RateLimits::member_key(std::string_view board, std::string_view member) const {
  std::string text(salt_.begin(), salt_.end());
  text.append(board).push_back('\0');
  text.append(member);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < 8; ++i) key = key << 8 | digest[i];
  return key == 0 ? 1 : key;  // 0 is no member's
}

std::size_t RateLimits::buckets() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

std::optional<Verdict> RateLimits::admit(Access access, std::uint64_t who, std::uint64_t member) {
  return decide(access, who, member, true);
}

std::optional<Verdict> RateLimits::look(Access access, std::uint64_t who, std::uint64_t member) {
  return decide(access, who, member, false);
}

// The class's bucket and the member's, each refilled: a request is taken from both or
// neither. `take` false: nothing is taken and no bucket is made (a missing one is full).
std::optional<Verdict> RateLimits::decide(Access access, std::uint64_t who, std::uint64_t member,
                                          bool take) {
  struct Side {
    const TokenBucket* rule;
    Key key;
    Bucket level;
    Verdict verdict;
  };
  const LimitClass own = class_of(access);
  const auto rule = [this](LimitClass c) {
    const auto& r = rules_[static_cast<std::size_t>(c)];
    return r ? &*r : nullptr;
  };
  Side sides[2] = {
      {rule(own), {own, who}, {}, {}},
      {access == Access::write && member != 0 ? rule(LimitClass::write_per_member) : nullptr,
       {LimitClass::write_per_member, member},
       {},
       {}}};
  if (sides[0].rule == nullptr && sides[1].rule == nullptr) return std::nullopt;
  const SteadyTime now = now_();
  const std::lock_guard<std::mutex> lock(mu_);
  if (take) sweep(now, 2);
  bool all = true;
  for (Side& s : sides) {
    if (s.rule == nullptr) continue;
    const auto it = buckets_.find(s.key);
    s.level = s.rule->refilled(it == buckets_.end() ? s.rule->full(now) : it->second, now);
    s.verdict = s.rule->look(s.level);
    s.verdict.of = s.key.limit;
    all = all && s.verdict.allowed;
  }
  if (!take) return sides[0].rule != nullptr ? sides[0].verdict : sides[1].verdict;
  for (std::size_t i = 0; i < 2; ++i) {
    Side& s = sides[i];
    if (s.rule == nullptr) continue;
    if (all) {
      s.verdict = s.rule->take(s.level);
      s.verdict.of = s.key.limit;
    }
    bucket(s.key, sides[1 - i].key, now) = s.level;
  }
  if (all) return sides[0].rule != nullptr ? sides[0].verdict : sides[1].verdict;
  const bool first = sides[0].rule != nullptr && !sides[0].verdict.allowed &&
                     (sides[1].rule == nullptr || sides[1].verdict.allowed ||
                      sides[0].verdict.retry_after >= sides[1].verdict.retry_after);
  const Side& refusing = sides[first ? 0 : 1];
  ++refused_[static_cast<std::size_t>(refusing.key.limit)];
  return refusing.verdict;
}

RateLimits::Map::mapped_type& RateLimits::bucket(const Key& key, const Key& keep, SteadyTime now) {
  const auto it = buckets_.find(key);
  if (it != buckets_.end()) return it->second;
  make_room(key, keep);
  return buckets_.emplace(key, Bucket{0, now}).first->second;
}

void RateLimits::sweep(SteadyTime now, std::size_t steps) {
  for (std::size_t i = 0; i < steps && !buckets_.empty(); ++i) {
    if (sweep_ == buckets_.end()) sweep_ = buckets_.begin();
    const auto& rule = rules_[static_cast<std::size_t>(sweep_->first.limit)];
    if (rule && rule->is_full(sweep_->second, now)) {
      sweep_ = buckets_.erase(sweep_);
    } else {
      ++sweep_;
    }
  }
}

void RateLimits::make_room(const Key& keep_a, const Key& keep_b) {
  while (buckets_.size() >= max_buckets_) {
    if (sweep_ == buckets_.end()) sweep_ = buckets_.begin();
    if (sweep_->first == keep_a || sweep_->first == keep_b) {
      ++sweep_;
    } else {
      sweep_ = buckets_.erase(sweep_);
    }
  }
}

}  // namespace bk::api
