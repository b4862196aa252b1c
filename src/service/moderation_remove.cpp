// remove, ban, unban, bans (service/moderation.h): the remove protocol R1-R3 and the bans
// protocol B0, U1-U2 (docs/architecture.md, "Moderation").
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/json.h"
#include "core/validate.h"
#include "hot/registry.h"
#include "service/leaderboards.h"
#include "service/moderation.h"

namespace bk::service {
namespace {

// How often R1 may answer "again" (a new period appeared between listing the live periods
// and the script): each round adds the periods it named.
constexpr int kMaxRemoveRounds = 8;

void check_member(const std::string& member) {
  if (auto problem = member_problem(member)) throw UsageError(*problem);
}

// The board's periods a removal covers, by registry member, in a stable order.
class PeriodSet {
 public:
  PeriodSet(const BoardConfig& c, std::string board) : config_(c), board_(std::move(board)) {}

  // False for a period the config does not know (left alone: tick reports it).
  bool add(const std::string& period, const std::string& period_id) {
    const PeriodSpec* spec = config_.period(period);
    if (spec == nullptr) return false;
    const auto p = period_from_id(*spec, *config_.zone, period_id);
    if (!p) return false;
    add(*spec, *p);
    return true;
  }
  void add(const PeriodSpec& spec, const Period& p) {
    const std::string reg = hot::registry_member(spec.name, p.id);
    if (periods_.count(reg) == 0) {
      periods_.emplace(reg,
                       hot::RemovalPeriod{spec.name, p.id, p.end + config_.retention_for(spec)});
    }
  }
  // Registry members (the registry's, or R1's "again"): added, or, for a period the config
  // does not know, remembered as left alone. False when none was new.
  bool add_registry(const std::vector<std::string>& members) {
    bool added = false;
    for (const std::string& m : members) {
      if (periods_.count(m) != 0 || ignored_.count(m) != 0) continue;
      const hot::LivePeriod lp = hot::split_registry_member(m);
      if (!add(lp.period, lp.period_id)) ignored_.insert(m);
      added = true;
    }
    return added;
  }
  std::vector<std::string> ignored() const { return {ignored_.begin(), ignored_.end()}; }
  std::vector<hot::RemovalPeriod> list() const {
    std::vector<hot::RemovalPeriod> out;
    for (const auto& [reg, p] : periods_) out.push_back(p);
    // Ordered by (period, id), the order erase's transaction locks periods in too, so the
    // two never wait for each other's period locks in a cycle ("cup2:" sorts before "cup:").
    std::sort(out.begin(), out.end(), [](const hot::RemovalPeriod& a, const hot::RemovalPeriod& b) {
      return std::tie(a.period_name, a.period_id) < std::tie(b.period_name, b.period_id);
    });
    return out;
  }

 private:
  const BoardConfig& config_;
  std::string board_;
  std::map<std::string, hot::RemovalPeriod> periods_;
  std::set<std::string> ignored_;  // registry members of periods the config does not know
};

// R2, waiting at most `lock_wait` (when given) for each period's lock.
std::vector<cold::MemberRowsRemoved> remove_rows(
    ModerationCold& cold, const std::vector<cold::PeriodKey>& keys, const std::string& member,
    bool ban, std::optional<std::chrono::milliseconds> lock_wait) {
  try {
    return cold.remove_rows(member, keys, lock_wait);
  } catch (const BusyError& e) {
    throw BusyError((ban ? "ban: " : "remove: ") + quoted(member) + " is off every read of board " +
                    quoted(keys.front().board) + " already (and left out of archives), but " +
                    e.what() +
                    ", so its cold rows are not deleted yet: try again, or the next tick deletes "
                    "them");
  }
}

}  // namespace

Removal Moderation::remove(const std::string& board, const std::string& member,
                           const std::optional<std::string>& period,
                           const std::optional<std::string>& period_id) {
  return remove_member(board, member, period, period_id, false);
}

BanResult Moderation::ban(const std::string& board, const std::string& member,
                          const std::string& reason) {
  board_entry(config_, board);
  check_member(member);
  if (reason.find('\0') != std::string::npos) throw UsageError("a ban reason cannot contain NUL");
  ModerationCold& cold = cold_side("ban");
  BanResult out;
  // B0 first: from its commit on, a board sync (after Redis lost its data) restores the ban.
  out.newly_banned = cold.ban(board, member, reason, clock_.now());
  out.removed = remove_member(board, member, std::nullopt, std::nullopt, true);
  return out;
}

bool Moderation::unban(const std::string& board, const std::string& member) {
  board_entry(config_, board);
  check_member(member);
  ModerationCold& cold = cold_side("unban");
  const bool was = cold.unban(board, member);  // U1
  hot_->unban(board, member);                  // U2
  return was;
}

std::vector<BanRecord> Moderation::bans(const std::string& board) {
  board_entry(config_, board);
  std::vector<BanRecord> out;
  for (cold::BanRow& row : cold_side("bans").bans(board)) {
    out.push_back({board, std::move(row.member), std::move(row.reason), row.banned_at});
  }
  return out;
}

Removal Moderation::remove_member(const std::string& board, const std::string& member,
                                  const std::optional<std::string>& period,
                                  const std::optional<std::string>& period_id, bool ban) {
  const BoardConfig& c = board_entry(config_, board);
  check_member(member);
  PeriodSet set(c, board);
  ModerationCold* cold = cold_side();
  if (period) {
    const PeriodRef ref = resolve_period(config_, board, *period, period_id, clock_.now());
    set.add(*ref.spec, ref.period);
  } else {
    // Every live period: the registry's, and those PostgreSQL has cold rows of (Redis may
    // have forgotten them).
    for (const hot::LivePeriod& lp : hot_->live_periods(board)) {
      set.add_registry({hot::registry_member(lp.period, lp.period_id)});
    }
    if (cold != nullptr) {
      for (const cold::PeriodKey& k : cold->periods_with_rows(board))
        set.add(k.period, k.period_id);
    }
  }
  // R1: hot entry and tombstones (and the ban), atomically.
  hot::RemovalRequest request{board, member, set.list(), ban, !period.has_value(), set.ignored()};
  hot::MemberRemoval r1 = hot_->remove(request);
  for (int round = 1; !r1.again.empty(); ++round) {
    if (round == kMaxRemoveRounds || !set.add_registry(r1.again)) {
      throw UnavailableError("remove: the periods of board '" + board +
                             "' kept changing while it ran (" + r1.again.front() +
                             "); nothing removed, try again");
    }
    request.periods = set.list();
    request.ignored = set.ignored();
    r1 = hot_->remove(request);
  }
  // R2: the cold rows (and history rows of a period archived meanwhile), under each period's
  // lock; R3: merged reads of the periods whose cold rows went read again.
  std::vector<cold::PeriodKey> keys;
  for (const hot::RemovalPeriod& p : request.periods)
    keys.push_back({board, p.period_name, p.period_id});
  std::vector<cold::MemberRowsRemoved> r2(keys.size());
  if (cold != nullptr && !keys.empty()) r2 = remove_rows(*cold, keys, member, ban, lock_wait_);
  Removal out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const hot::RemovalPeriod& p = request.periods[i];
    if (r2[i].cold > 0) hot_->touch_reads(board, p.period_name, p.period_id);
    out.periods.push_back({board, p.period_name, p.period_id, r2[i].archived,
                           r1.periods[i].hot ? 1 : 0, r2[i].cold, r2[i].history});
  }
  return out;
}

}  // namespace bk::service
