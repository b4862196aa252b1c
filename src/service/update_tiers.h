// What the update path (service/updates.h) needs of Redis and of PostgreSQL, as two narrow
// interfaces in the service's terms, and the production adapters over hot/ and cold/.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cold/bans.h"
#include "cold/cold_store.h"
#include "config/config.h"
#include "hot/board_scripts.h"
#include "redis/connection.h"
#include "service/types.h"

namespace bk::service {

// The hot tier as the update path uses it. A Redis failure throws (redis errors); a hold or
// release the board's keys refuse for good throws redis::ReplyError.
class HotUpdateTier {
 public:
  virtual ~HotUpdateTier() = default;
  // One update script call per batch (see hot::BoardScripts::apply): results per event.
  virtual std::vector<std::vector<hot::HotResult>> apply(
      const std::vector<hot::HotBatch>& batches,
      const std::function<void()>& while_waiting = {}) = 0;
  // Holds these (member, token) pairs of `board` / releases holds of these tokens.
  virtual void hold(const std::string& board, const hot::BoardScripts::Holds& holds) = 0;
  virtual void release_holds(const std::string& board, const hot::BoardScripts::Holds& holds) = 0;
  // Marks the periods of `board` that have cold rows, rebuilds its bans cache and marks the
  // board synced (see sync_board; `read_cold` queries PostgreSQL): returns how many periods
  // Redis had forgotten.
  virtual std::int64_t sync(const std::string& board,
                            const std::function<ColdBoardState()>& read_cold) = 0;
  // Enters `board` in the board set that tick walks (before its first write).
  virtual void register_board(const std::string& board) = 0;
};

// The cold tier as the update path uses it. Unreachable: throws cold::PostgresUnavailable.
class ColdUpdateTier {
 public:
  virtual ~ColdUpdateTier() = default;
  // The members' cold rows (result i for keys[i]; nullopt: no row).
  virtual std::vector<std::optional<cold::ColdHit>> lookup(
      const std::vector<cold::MemberKey>& keys) = 0;
  // The periods of `board` that have cold rows.
  virtual std::vector<cold::PeriodKey> periods_with_rows(const std::string& board) = 0;
  // The members banned from `board`.
  virtual std::vector<std::string> banned_members(const std::string& board) = 0;
};

// Production: hot::BoardScripts over a Redis connection.
class RedisUpdateTier final : public HotUpdateTier {
 public:
  RedisUpdateTier(const Config& config, redis::Connection& redis, hot::BoardScripts& hot)
      : config_(config), redis_(redis), hot_(hot) {}
  std::vector<std::vector<hot::HotResult>> apply(
      const std::vector<hot::HotBatch>& batches,
      const std::function<void()>& while_waiting = {}) override;
  void hold(const std::string& board, const hot::BoardScripts::Holds& holds) override;
  void release_holds(const std::string& board, const hot::BoardScripts::Holds& holds) override;
  std::int64_t sync(const std::string& board,
                    const std::function<ColdBoardState()>& read_cold) override;
  void register_board(const std::string& board) override;

 private:
  const Config& config_;
  redis::Connection& redis_;
  hot::BoardScripts& hot_;
};

// Production: cold::ColdStore, asked for (and so connected) only when first needed.
class PostgresUpdateTier final : public ColdUpdateTier {
 public:
  explicit PostgresUpdateTier(std::function<cold::ColdStore&()> store) : store_(std::move(store)) {}
  std::vector<std::optional<cold::ColdHit>> lookup(
      const std::vector<cold::MemberKey>& keys) override {
    return store_().lookup(keys);
  }
  std::vector<cold::PeriodKey> periods_with_rows(const std::string& board) override {
    return store_().periods_with_rows(board);
  }
  std::vector<std::string> banned_members(const std::string& board) override {
    return cold::Bans(store_().link()).members(board);
  }

 private:
  std::function<cold::ColdStore&()> store_;
};

}  // namespace bk::service
