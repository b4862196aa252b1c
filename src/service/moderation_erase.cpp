// erase (service/moderation.h): the right to erasure, as the protocol in docs/architecture.md
// ("Moderation") runs it. Per matching board: E1 remove() from every live period (hot entry,
// cold rows of live periods, tombstones set); E2 PostgreSQL's rows of the member in one
// transaction (cold rows of any period, archived history rows, profile, ban); E3 the board's
// Redis keys forget it (profile fields, hold, ban cache entry, tombstones). Then the dead
// letters of the ingest streams. Every step is idempotent, so a killed erase is finished by
// running it again; an audit row records the request under a keyed hash of the member.
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "cold/erasure.h"
#include "core/error.h"
#include "core/redact.h"
#include "core/validate.h"
#include "hot/registry.h"
#include "service/moderation.h"

namespace bk::service {
namespace {

constexpr std::size_t kErasureKeyBytes = 32;

// The deployment's erasure key (serve_keys "erasure"): made by the first erase that needs
// it; never shown (registered as a secret, so no log line can carry it).
std::string erasure_key(ModerationCold& cold) {
  std::string candidate(kErasureKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(candidate.data()),
                 static_cast<int>(candidate.size())) != 1) {
    throw Error("erase: OpenSSL's RAND_bytes failed");
  }
  std::string key = cold.erasure_key(candidate);
  add_secret(key);
  return key;
}

using PeriodMap = std::map<std::pair<std::string, std::string>, PeriodRemoval>;

PeriodRemoval& entry(PeriodMap& periods, const std::string& board, const std::string& period,
                     const std::string& period_id) {
  PeriodRemoval& p = periods[{period, period_id}];
  p.board = board;
  p.period = period;
  p.period_id = period_id;
  return p;
}

// What one erase needs besides the Moderation it runs in.
struct EraseRun {
  const Config& config;
  ModerationHot& hot;
  ModerationCold& cold;  // holds the board's profile lock over E2 and E3
  const std::string& member;
  bool dry_run;
};

// E1: the live periods through remove(). False for a board no longer in the config: its
// periods cannot be resolved, so its live Redis keys are not searched (the caller says so).
bool remove_live(Moderation& moderation, const EraseRun& run, const std::string& board,
                 PeriodMap& periods) {
  if (run.config.board_for(board) == nullptr) return false;
  if (run.dry_run) return true;  // the dry run counts hot entries in E3's counting variant
  for (const PeriodRemoval& r : moderation.remove(board, run.member).periods) {
    PeriodRemoval& p = entry(periods, board, r.period, r.period_id);
    p.hot += r.hot;
    p.cold += r.cold;
    p.history += r.history;
    p.archived = p.archived || r.archived;
  }
  return true;
}

// E2: PostgreSQL's rows of the member on the board.
void erase_rows(const EraseRun& run, const std::string& board, PeriodMap& periods,
                BoardErasure& out) {
  const cold::ErasedBoard e = run.cold.erase(board, run.member, run.dry_run);
  for (const cold::ErasedPeriod& c : e.periods) {
    PeriodRemoval& p = entry(periods, board, c.key.period, c.key.period_id);
    p.cold += c.cold;
    p.history += c.history;
    p.archived = p.archived || c.archived;
  }
  out.profiles += e.profiles;
  out.bans += e.bans;
}

// E3: the board's Redis keys.
void forget_in_redis(const EraseRun& run, const std::string& board, PeriodMap& periods,
                     BoardErasure& out) {
  const std::vector<hot::LivePeriod> live = run.hot.live_periods(board);
  const hot::BoardForgotten f = run.hot.forget(board, live, run.member, run.dry_run, out.bans > 0);
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (f.hot[i] > 0) entry(periods, board, live[i].period, live[i].period_id).hot += f.hot[i];
  }
  out.profiles += f.profiles;
  out.bans += f.bans;
  out.held += f.held;
}

BoardErasure erase_board(Moderation& moderation, const EraseRun& run, const std::string& board,
                         std::vector<std::string>& unsearched) {
  PeriodMap periods;
  BoardErasure out;
  out.board = board;
  if (!remove_live(moderation, run, board, periods)) unsearched.push_back(board);
  {
    // The profile in PostgreSQL and in Redis go under the board's profile lock, which a tick
    // holds from reading profiles in Redis to writing them to PostgreSQL: one it read before
    // E3 is never written back after E2.
    std::unique_ptr<HeldLock> lock;
    if (!run.dry_run) lock = run.cold.profile_lock(board);
    erase_rows(run, board, periods, out);
    forget_in_redis(run, board, periods, out);
  }
  for (auto& [key, p] : periods) {
    if (p.total() > 0) out.periods.push_back(std::move(p));
  }
  return out;
}

// The boards Redis knows or PostgreSQL holds rows of, matched by the glob, sorted.
std::vector<std::string> matching_boards(const EraseRun& run, const std::string& glob) {
  std::set<std::string> all;
  for (std::string& b : run.hot.known_boards()) all.insert(std::move(b));
  for (std::string& b : run.cold.boards_with_rows()) all.insert(std::move(b));
  std::vector<std::string> out;
  for (const std::string& b : all) {
    if (board_matches(glob, b)) out.push_back(b);
  }
  return out;
}

// The dead letters of the ingest streams: of every board with the glob "*" (letters of
// boards nobody knows included), else of the matching boards.
std::int64_t erase_dead_letters(const EraseRun& run, const std::string& glob,
                                const std::vector<std::string>& boards) {
  const hot::Eraser::LetterBoards which{glob == "*", boards};
  std::int64_t n = 0;
  for (const std::string& stream : run.config.ingest.streams) {
    n += run.hot.dead_letters(stream + ":dead", run.member, which, run.dry_run);
  }
  return n;
}

void check_request(const std::string& member, const EraseOptions& options) {
  if (auto problem = member_problem(member)) throw UsageError("member id: " + *problem);
  if (auto problem = board_pattern_problem(options.boards)) {
    throw UsageError("--board '" + valid_utf8(options.boards) + "': " + *problem);
  }
}

}  // namespace

Erasure Moderation::erase(const std::string& member, const EraseOptions& options) {
  check_request(member, options);
  ModerationCold& cold = cold_side("erase");
  const EraseRun run{config_, *hot_, cold, member, options.dry_run};
  Erasure out;
  out.dry_run = options.dry_run;
  out.member_hash = cold::keyed_hash(erasure_key(cold), member);
  // The audit row first: a request killed at any later point is on record.
  const std::int64_t id = options.dry_run ? 0 : cold.begin_erasure(out.member_hash, clock_.now());
  out.earlier_requests = cold.earlier_erasures(
      out.member_hash, options.dry_run ? std::numeric_limits<std::int64_t>::max() : id);
  const std::vector<std::string> boards = matching_boards(run, options.boards);
  std::vector<std::string> unsearched;  // boards no config entry covers
  for (const std::string& board : boards) {
    BoardErasure b = erase_board(*this, run, board, unsearched);
    if (b.total() == 0) continue;
    if (!options.dry_run) cold.record_erasure(id, board, b.total());
    out.boards.push_back(std::move(b));
  }
  out.dead_letters = erase_dead_letters(run, options.boards, boards);
  if (!unsearched.empty()) {
    // Not done: the audit row stays unfinished, and the request fails naming the boards.
    std::string names;
    for (const std::string& b : unsearched) names += (names.empty() ? "'" : ", '") + b + "'";
    throw RefusedError("erase: the member's live Redis periods on board(s) " + names +
                       " could not be searched: no entry of " + config_.path +
                       " covers them. Everything else is erased; add the board(s) back to the "
                       "config and run erase again");
  }
  if (!options.dry_run) cold.finish_erasure(id, out.dead_letters, clock_.now());
  return out;
}

}  // namespace bk::service
