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

  std::vector<std::string> known_boards() override { return hot::known_boards(conn_, prefix_); }
  hot::BoardForgotten forget(const std::string& board, const std::vector<hot::LivePeriod>& live,
                             const std::string& member, bool dry_run, bool cold_ban) override {
    return eraser_.forget(conn_, hot::BoardKeys(prefix_, board), live, member, dry_run, cold_ban);
  }
  std::int64_t dead_letters(const std::string& dead_stream, const std::string& member,
                            const hot::Eraser::LetterBoards& boards, bool dry_run) override {
    return eraser_.dead_letters(conn_, dead_stream, member, boards, dry_run);
  }

  hot::PeriodPhase phase(const std::string& board, const std::string& period,
                         const std::string& period_id) override {
    return reset_.phase(conn_, hot::PeriodKeys(hot::BoardKeys(prefix_, board), period, period_id));
  }
  std::int64_t empty_period(const std::string& board, const std::string& period,
                            const std::string& period_id) override {
    return reset_.empty_period(conn_, hot::BoardKeys(prefix_, board), period, period_id);
  }
  hot::BoardReset::DropKeys drop_board_keys(const std::string& board,
                                            const std::vector<std::string>& emptied) override {
    return reset_.drop_board_keys(conn_, hot::BoardKeys(prefix_, board), emptied);
  }
  bool forget_board(const std::string& board) override { return reset_.forget_board(conn_, board); }

 private:
  redis::Connection& conn_;
  std::string prefix_;
  hot::Moderation scripts_;
  hot::Eraser eraser_;
  hot::BoardReset reset_{prefix_};
};

class HeldProfileLock final : public HeldLock {
 public:
  HeldProfileLock(cold::ColdStore& store, const std::string& board) : lock_(store, board) {}

 private:
  cold::ProfileLock lock_;
};

class HeldPeriodLock final : public PeriodLock {
 public:
  HeldPeriodLock(cold::ColdStore& store, const cold::PeriodKey& period) : reset_(store.link()) {
    reset_.lock(period);
  }
  cold::PeriodEmptied empty(bool refuse_closed) override {
    return reset_.empty_period(refuse_closed);
  }
  void release() override { reset_.unlock(); }

 private:
  cold::BoardReset reset_;  // its destructor releases a lock still held
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

  std::string erasure_key(const std::string& candidate) override {
    return store_.shared_key("erasure", candidate);
  }
  std::vector<std::string> boards_with_rows() override { return erasure_.boards(); }
  cold::ErasedBoard erase(const std::string& board, const std::string& member,
                          bool dry_run) override {
    return erasure_.erase(board, member, dry_run);
  }
  std::int64_t begin_erasure(const std::string& member_hash, Instant now) override {
    return erasure_.begin(member_hash, now);
  }
  std::int64_t earlier_erasures(const std::string& member_hash, std::int64_t id) override {
    return erasure_.earlier(member_hash, id);
  }
  void record_erasure(std::int64_t id, const std::string& board, std::int64_t rows) override {
    erasure_.record(id, board, rows);
  }
  void finish_erasure(std::int64_t id, std::int64_t dead_letters, Instant now) override {
    erasure_.finish(id, dead_letters, now);
  }

  std::unique_ptr<HeldLock> profile_lock(const std::string& board) override {
    return std::make_unique<HeldProfileLock>(store_, board);
  }
  std::unique_ptr<PeriodLock> lock_period(const cold::PeriodKey& period) override {
    return std::make_unique<HeldPeriodLock>(store_, period);
  }
  cold::BoardDropped drop_board(const std::string& board, bool history) override {
    return cold::BoardReset(store_.link()).drop_board(board, history);
  }

 private:
  cold::ColdStore& store_;
  cold::ErasureStore erasure_{store_.link()};
};

}  // namespace

std::unique_ptr<ModerationHot> redis_moderation(redis::Connection& conn, std::string key_prefix) {
  return std::make_unique<RedisModeration>(conn, std::move(key_prefix));
}

std::unique_ptr<ModerationCold> postgres_moderation(cold::ColdStore& store) {
  return std::make_unique<PostgresModeration>(store);
}

}  // namespace bk::service
