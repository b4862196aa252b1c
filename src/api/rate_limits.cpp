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

Verdict TokenBucket::look(const Bucket& b, std::int64_t count) const {
  const auto asked = static_cast<double>(count);
  Verdict v;
  v.allowed = b.level >= asked - kSlack;
  v.limit = limit_.burst;
  v.remaining = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(b.level + kSlack)));
  v.reset = whole_seconds_up((static_cast<double>(limit_.burst) - b.level) / limit_.per_second);
  if (count > limit_.burst) {
    v.allowed = false;
    v.never = true;
  } else if (!v.allowed) {
    v.retry_after =
        std::max<std::int64_t>(1, whole_seconds_up((asked - b.level) / limit_.per_second));
  }
  return v;
}

Verdict TokenBucket::take(Bucket& b, std::int64_t count) const {
  if (!look(b, count).allowed) return look(b, count);
  b.level = std::max(0.0, b.level - static_cast<double>(count));
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
  return decide(access, who, member, Mode::take);
}

std::optional<Verdict> RateLimits::look(Access access, std::uint64_t who, std::uint64_t member) {
  return decide(access, who, member, Mode::look);
}

std::optional<Verdict> RateLimits::check(Access access, std::uint64_t who) {
  return decide(access, who, 0, Mode::check);
}

const TokenBucket* RateLimits::rule(LimitClass c) const {
  const auto& r = rules_[static_cast<std::size_t>(c)];
  return r ? &*r : nullptr;
}

// The class's bucket and the member's: a request is taken from both or neither.
std::optional<Verdict> RateLimits::decide(Access access, std::uint64_t who, std::uint64_t member,
                                          Mode mode) {
  const LimitClass own = class_of(access);
  Need needs[2] = {
      {rule(own), {own, who}, 1, {}, {}},
      {access == Access::write && member != 0 ? rule(LimitClass::write_per_member) : nullptr,
       {LimitClass::write_per_member, member},
       1,
       {},
       {}}};
  return settle(needs, 2, mode);
}

std::optional<Verdict> RateLimits::admit_batch(std::uint64_t who, std::int64_t events,
                                               const MemberEvents& members) {
  std::vector<Need> needs;
  needs.reserve(members.size() + 1);
  needs.push_back({rule(LimitClass::write), {LimitClass::write, who}, events, {}, {}});
  if (const TokenBucket* per_member = rule(LimitClass::write_per_member)) {
    for (const auto& [member, count] : members) {
      needs.push_back({per_member, {LimitClass::write_per_member, member}, count, {}, {}});
    }
  }
  const std::optional<Verdict> v = settle(needs.data(), needs.size(), Mode::take);
  if (!v || !v->allowed || needs.front().rule != nullptr) return v;
  // Without a token's limit, the member's bucket with the least left speaks for the batch.
  const auto least = std::min_element(
      needs.begin() + 1, needs.end(),
      [](const Need& a, const Need& b) { return a.verdict.remaining < b.verdict.remaining; });
  return least->verdict;
}

// Every need's bucket refilled, then: a look answers the first's verdict; a check or a take
// refused by any counts the refusal and answers the longest wait (a burst that can never pay
// first); a take allowed by all takes from all. Look and check make no bucket.
std::optional<Verdict> RateLimits::settle(Need* needs, std::size_t n, Mode mode) {
  Need* first = nullptr;
  for (std::size_t i = 0; i < n && first == nullptr; ++i) {
    if (needs[i].rule != nullptr) first = &needs[i];
  }
  if (first == nullptr) return std::nullopt;
  const SteadyTime now = now_();
  const std::lock_guard<std::mutex> lock(mu_);
  if (mode == Mode::take) sweep(now, 2);
  const Need* refusing = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    Need& s = needs[i];
    if (s.rule == nullptr) continue;
    const auto it = buckets_.find(s.key);
    s.level = s.rule->refilled(it == buckets_.end() ? s.rule->full(now) : it->second, now);
    s.verdict = s.rule->look(s.level, s.count);
    s.verdict.of = s.key.limit;
    s.verdict.whose = s.key.id;
    if (s.verdict.allowed) continue;
    if (refusing == nullptr || (s.verdict.never && !refusing->verdict.never) ||
        (s.verdict.never == refusing->verdict.never &&
         s.verdict.retry_after > refusing->verdict.retry_after)) {
      refusing = &s;
    }
  }
  if (mode == Mode::look || (mode == Mode::check && refusing == nullptr)) return first->verdict;
  if (refusing != nullptr) {
    // A burst that can never pay is no 429: not counted, and no bucket is made for it.
    if (!refusing->verdict.never) ++refused_[static_cast<std::size_t>(refusing->key.limit)];
    if (mode == Mode::take && !refusing->verdict.never) {
      for (std::size_t i = 0; i < n; ++i) {
        if (needs[i].rule != nullptr) bucket(needs[i].key, needs, n, now) = needs[i].level;
      }
    }
    return refusing->verdict;
  }
  for (std::size_t i = 0; i < n; ++i) {
    Need& s = needs[i];
    if (s.rule == nullptr) continue;
    s.verdict = s.rule->take(s.level, s.count);
    s.verdict.of = s.key.limit;
    s.verdict.whose = s.key.id;
    bucket(s.key, needs, n, now) = s.level;
  }
  return first->verdict;
}

RateLimits::Map::mapped_type& RateLimits::bucket(const Key& key, const Need* keep, std::size_t n,
                                                 SteadyTime now) {
  const auto it = buckets_.find(key);
  if (it != buckets_.end()) return it->second;
  make_room(keep, n);
  const std::size_t slots = buckets_.bucket_count();
  Bucket& made = buckets_.emplace(key, Bucket{0, now}).first->second;
  // Beyond the cap (a batch with more members than it) the map may rehash: the sweep starts
  // again.
  if (buckets_.bucket_count() != slots) sweep_ = buckets_.end();
  return made;
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

// Room for one more bucket: the next ones in the sweep's order go, except those of the
// request being decided (`keep`); when only those are left, none goes.
void RateLimits::make_room(const Need* keep, std::size_t n) {
  const auto kept = [keep, n](const Key& k) {
    for (std::size_t i = 0; i < n; ++i) {
      if (keep[i].rule != nullptr && keep[i].key == k) return true;
    }
    return false;
  };
  for (std::size_t passed = 0; buckets_.size() >= max_buckets_ && passed <= buckets_.size();) {
    if (sweep_ == buckets_.end()) sweep_ = buckets_.begin();
    if (kept(sweep_->first)) {
      ++sweep_;
      ++passed;
    } else {
      sweep_ = buckets_.erase(sweep_);
      passed = 0;
    }
  }
}

}  // namespace bk::api
