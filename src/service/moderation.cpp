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
    : config_(config), redis_(redis), clock_(std::move(clock)), cold_(std::move(cold)) {}

cold::ColdStore& Moderation::cold_store(const char* what) {
  if (!cold_) {
    throw UsageError(std::string(what) +
                     " needs PostgreSQL (the postgres section of the config): bans, cold rows "
                     "and history are kept there");
  }
  return cold_();
}

}  // namespace bk::service
