// The update path's hot tier in production: hot::BoardScripts and the board registry over one
// Redis connection.
#include "service/update_tiers.h"

#include "hot/registry.h"
#include "service/leaderboards.h"

namespace bk::service {

std::vector<std::vector<hot::HotResult>> RedisUpdateTier::apply(
    const std::vector<hot::HotBatch>& batches, const std::function<void()>& while_waiting) {
  return hot_.apply(redis_, batches, while_waiting);
}

void RedisUpdateTier::hold(const std::string& board, const hot::BoardScripts::Holds& holds) {
  hot_.hold(redis_, hot::BoardKeys(config_.redis.key_prefix, board), holds);
}

void RedisUpdateTier::release_holds(const std::string& board,
                                    const hot::BoardScripts::Holds& holds) {
  hot_.release_holds(redis_, hot::BoardKeys(config_.redis.key_prefix, board), holds);
}

std::int64_t RedisUpdateTier::sync(const std::string& board,
                                   const std::function<ColdBoardState()>& read_cold) {
  return sync_board(config_, redis_, hot_, board, read_cold);
}

void RedisUpdateTier::register_board(const std::string& board) {
  hot::add_board(redis_, config_.redis.key_prefix, board);
}

}  // namespace bk::service
