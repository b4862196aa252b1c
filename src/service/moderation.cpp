// What the moderation operations share (service/moderation.h); each operation lives in its
// own file (moderation_remove.cpp, moderation_erase.cpp, moderation_reset.cpp).
#include "service/moderation.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace bk::service {

bool Removal::found() const {
  return std::any_of(periods.begin(), periods.end(),
                     [](const PeriodRemoval& p) { return p.total() > 0; });
}

namespace {
std::int64_t sum(const std::vector<PeriodRemoval>& periods) {
  std::int64_t n = 0;
  for (const PeriodRemoval& p : periods) n += p.total();
  return n;
}
}  // namespace

std::int64_t BoardErasure::total() const {
  return sum(periods) + profiles + bans + held;
}

std::int64_t Erasure::total() const {
  std::int64_t n = dead_letters;
  for (const BoardErasure& b : boards) n += b.total();
  return n;
}

std::int64_t Drop::total() const {
  return sum(periods) + profiles + keys;
}

Moderation::Moderation(const Config& config, redis::Connection& redis, Clock clock,
                       std::function<cold::ColdStore&()> cold)
    : config_(config),
      clock_(std::move(clock)),
      cold_(std::move(cold)),
      own_hot_(redis_moderation(redis, config.redis.key_prefix)),
      hot_(own_hot_.get()) {}

Moderation::Moderation(const Config& config, Clock clock, ModerationHot& hot, ModerationCold* cold)
    : config_(config), clock_(std::move(clock)), hot_(&hot), given_cold_(cold) {}

Moderation::~Moderation() = default;

namespace {
[[noreturn]] void needs_postgres(const char* what) {
  throw UsageError(std::string(what) +
                   " needs PostgreSQL (the postgres section of the config): bans, cold rows "
                   "and history are kept there");
}
}  // namespace

ModerationCold* Moderation::cold_side() {
  if (given_cold_ != nullptr || !cold_) return given_cold_;
  cold::ColdStore& store = cold_();  // connected on first use
  if (!own_cold_ || own_cold_store_ != &store) {
    own_cold_ = postgres_moderation(store);
    own_cold_store_ = &store;
  }
  return own_cold_.get();
}

ModerationCold& Moderation::cold_side(const char* what) {
  ModerationCold* side = cold_side();
  if (side == nullptr) needs_postgres(what);
  return *side;
}

}  // namespace bk::service
