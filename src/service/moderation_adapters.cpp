// ModerationHot and ModerationCold over Redis and PostgreSQL (service/moderation_tiers.h):
// each call is one call of the tier's own class, nothing decided here.
#include <utility>

#include "service/moderation_tiers.h"

namespace bk::service {
namespace {

class RedisModeration final : public ModerationHot {
 public:
  RedisModeration(redis::Connection& conn, std::string key_prefix)
      : conn_(conn), prefix_(std::move(key_prefix)), scripts_(prefix_) {}

  std::vector<hot::LivePeriod> live_periods(const std::string& board) override {
    return hot::live_periods(conn_, hot::BoardKeys(prefix_, board));
  }
  hot::MemberRemoval remove(const hot::RemovalRequest& request) override {
    return scripts_.remove(conn_, request);
  }
  void touch_reads(const std::string& board, const std::string& period,
                   const std::string& period_id) override {
    scripts_.touch_reads(conn_, hot::PeriodKeys(hot::BoardKeys(prefix_, board), period, period_id));
  }
  bool unban(const std::string& board, const std::string& member) override {
    return scripts_.unban(conn_, board, member);
  }

 private:
  redis::Connection& conn_;
  std::string prefix_;
  hot::Moderation scripts_;
};

class PostgresModeration final : public ModerationCold {
 public:
  explicit PostgresModeration(cold::ColdStore& store) : store_(store) {}

  std::vector<cold::PeriodKey> periods_with_rows(const std::string& board) override {
    return store_.periods_with_rows(board);
  }
  std::vector<cold::MemberRowsRemoved> remove_rows(
      const std::string& member, const std::vector<cold::PeriodKey>& periods,
      std::optional<std::chrono::milliseconds> lock_wait) override {
    return cold::MemberRows(store_.link()).remove(member, periods, lock_wait);
  }
  bool ban(const std::string& board, const std::string& member, const std::string& reason,
           Instant at) override {
    return cold::Bans(store_.link()).ban(board, member, reason, at);
  }
  bool unban(const std::string& board, const std::string& member) override {
    return cold::Bans(store_.link()).unban(board, member);
  }
  std::vector<cold::BanRow> bans(const std::string& board) override {
    return cold::Bans(store_.link()).of(board);
  }

 private:
  cold::ColdStore& store_;
};

}  // namespace

std::unique_ptr<ModerationHot> redis_moderation(redis::Connection& conn, std::string key_prefix) {
  return std::make_unique<RedisModeration>(conn, std::move(key_prefix));
}

std::unique_ptr<ModerationCold> postgres_moderation(cold::ColdStore& store) {
  return std::make_unique<PostgresModeration>(store);
}

}  // namespace bk::service
