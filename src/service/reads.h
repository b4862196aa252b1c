// The service's one entry point for reads: a board period wherever it lives, an open period
// from Redis and the cold tier (service::LiveReads, over the tier interfaces), an archived one
// from the history. What the HTTP read API, the CLI's read commands and the library call
// (Leaderboards::reads()), so all answer the same.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/history.h"
#include "config/config.h"
#include "core/error.h"
#include "service/cohorts.h"
#include "service/types.h"

namespace bk::cold {
class ColdStore;
}

namespace bk::service {

class ColdIndexes;
class LiveReads;
class PostgresTier;
struct ReplicaReads;

// A read found nothing where it looked: a period that has not begun, whose history was
// removed (history.retention) or recorded lost, or with nothing to read. A NotFoundError
// (HTTP 404) whose exit code is 1 in the CLI: the command was well formed, the thing read is
// not there (a malformed or unknown name stays a usage error, exit 2).
class NothingToReadError : public NotFoundError {
 public:
  using NotFoundError::NotFoundError;
  ExitCode exit_code() const noexcept override { return ExitCode::failed; }
};

// open: its end is ahead; closed: it ended and is still live (in its grace, or waiting for
// tick); archived: in history.
enum class PeriodState { open, closed, archived };

// A period located for reading (locate()); `PeriodView{ref}` reads `ref` as an open period.
struct PeriodView {
  PeriodRef ref;
  PeriodState state = PeriodState::open;
  std::int64_t archived_members = 0;  // archived: its history rows
};

// Where a page continues: after the last row of the previous one. `row` is that row as it
// was read (the listing key of an open period: points, achieved_at, member); `position` its
// 1-based place (an archived period's pages continue from it).
struct PageMark {
  std::int64_t position = 0;
  Standing row;
};

struct Page {
  // Members of the period; nullopt when they could not be counted (a spilled period's page
  // read from Redis alone while PostgreSQL is unreachable).
  std::optional<std::int64_t> total;
  std::vector<Standing> rows;    // in listing order
  std::optional<PageMark> next;  // where the next page starts; nullopt after the last row
};

// The archived periods of one board and period kind, newest first, a page at a time.
struct ArchivedPage {
  std::vector<cold::ArchivedPeriod> periods;
  std::optional<std::string> next;  // the last period id listed, when more may follow
};

class Reads {
 public:
  // Over the open-period reads and the cold tier a Leaderboards owns (it makes its Reads:
  // Leaderboards::reads()); `postgres` is where read_from_replica() points cold reads.
  Reads(const Config& config, Clock clock, LiveReads& live, PostgresTier& postgres);

  // Where archived periods are read (a cold::History, connected when first asked). Without
  // it, locating a period that has ended throws UsageError.
  void read_history_from(std::function<cold::History&()> archive);

  // `period_id` nullopt: the current period. Throws NotFoundError for an unknown board or
  // period, NothingToReadError for a period that has not begun, one whose history was
  // removed (history.retention) or recorded lost, or one with nothing to read; UsageError
  // for a malformed period id.
  PeriodView locate(const std::string& board, const std::string& period,
                    const std::optional<std::string>& period_id);

  // Every read returns each member's profile (Standing::name / metadata) when it has one, and
  // on a board with tiers each member's tier (Standing::tier): an open period's by the
  // current standing (a percent rule costs the period's count: see service/standing_tiers.h),
  // an archived one's as frozen in its history.
  // Reads are bounded: `limit` and `count` in [0, kMaxReadRows], `offset` in
  // [0, kMaxReadOffset], `k` in [0, kMaxReadRows / 2]; other values throw UsageError (never
  // an overflow, or a board loaded whole). An offset past the last member reads nothing.
  //
  // Up to `limit` rows listed after `after` (from the first without it). Open periods: the
  // page starts right after the mark's row as it sits when read (located by its listing
  // key, not by a count taken before), so a member that does not move is listed once
  // however others move; ranks are exact when read. The first page of a period that has not
  // spilled (or within its hot part) costs one Redis round trip.
  Page top(const PeriodView& view, const std::optional<PageMark>& after, std::int64_t limit);
  // Up to `count` rows from the 0-based position `offset` (the CLI's top --offset).
  std::vector<Standing> top_at(const PeriodView& view, std::int64_t offset, std::int64_t count);
  std::optional<Standing> member(const PeriodView& view, const std::string& member);
  // The standings of these members that are on the board, in listing order.
  std::vector<Standing> members(const PeriodView& view, const std::vector<std::string>& members);
  // member() of each (result i for members[i]): a few round trips whatever their number (at
  // most kMaxReadRows), hot or cold.
  std::vector<std::optional<Standing>> ranks(const PeriodView& view,
                                             const std::vector<std::string>& members);
  // The standings of a member right before and right after its update in an open period,
  // from what the update script read with it (UpdateResult::standings), without profiles:
  // Redis's word alone within the hot part, else also the cold rows of the spill generation
  // the script saw (memory or PostgreSQL). nullopt when those moved on meanwhile, or the
  // member may be cold (LiveReads::update_standings): then read its rank with ranks(). On a
  // tiered board both carry the member's tier (a percent rule costs the period's count once,
  // as every read's; untiered boards pay nothing more).
  std::optional<BeforeAfter> update_standings(const PeriodRef& ref, const std::string& member,
                                              const hot::HotStanding& facts);
  // The member and up to k members each side, in listing order; empty when it is not there.
  std::vector<Standing> around(const PeriodView& view, const std::string& member, std::int64_t k);
  // A league board's cohorts (service/cohorts.h): the cohort `member` is seated in, or the
  // cohort named `cohort` ("gold-3"). NotFoundError for a board that is not a league, a member
  // without a seat in the period (the message says when it waits for the cohorts to open), a
  // cohort id of no division or with nobody in it.
  Cohort cohort_of(const PeriodView& view, const std::string& member);
  Cohort cohort(const PeriodView& view, const std::string& cohort);
  // The period's members: hot and cold while open, the history rows once archived.
  std::int64_t count(const PeriodView& view);

  // Per period kind of `board`: the current period, its members (hot + cold), live and due
  // period counts.
  std::vector<PeriodStatus> periods(const std::string& board);
  // Up to `limit` (in [1, kMaxReadRows]) boards named after `after` (from the first without
  // it), by name: those a config entry names and those Redis holds, each once. One Redis
  // round trip; the work grows with the number of boards (each page reads the whole set).
  BoardsPage boards(const std::optional<std::string>& after, std::int64_t limit);
  // Up to `limit` archived periods of `board` and `period` (a kind or cron name) whose rows
  // are kept, newest first, with ids before `before` (a period id of that kind: UsageError
  // otherwise). Pruned and lost periods are not listed.
  ArchivedPage archived(const std::string& board, const std::string& period,
                        const std::optional<std::string>& before, std::int64_t limit);

  // Where reads of open periods find what they need (serve's set-up). Cold ranks from memory
  // (service/cold_index.h): reads of a spilled period use `indexes` when it holds the
  // period's current spill generation, and ask for its load when not (they go to PostgreSQL
  // meanwhile); load_cold_ranks() does one load (serve's loader thread): true when `indexes`
  // holds the period's current generation after it. Without a share, every cold read asks
  // PostgreSQL.
  void share_cold_ranks(std::shared_ptr<ColdIndexes> indexes);
  bool load_cold_ranks(const PeriodRef& ref);
  // Reads of cold rows and profiles go to `replica` (a streaming replica of the cold store)
  // when it has replayed what the primary had written when the read began, else to the
  // primary (service/replica.h); `reads` counts where they went.
  void read_from_replica(std::function<cold::ColdStore&()> replica,
                         std::shared_ptr<ReplicaReads> reads);

 private:
  const Config& config_;
  Clock clock_;
  LiveReads& live_;
  PostgresTier& postgres_;
  std::function<cold::History&()> archive_;

  cold::History& archive();
  Page archived_top(const PeriodView& view, const std::optional<PageMark>& after,
                    std::int64_t limit);
  Page next_page(const PeriodRef& ref, const PageMark& after, std::int64_t limit);
  PeriodView past(PeriodView view);
  // The period's members, or nullopt when PostgreSQL is needed to count them and is down.
  std::optional<std::int64_t> total_of(const PeriodRef& ref);
  // Live periods (open or closed, not archived): each row's tier (service/standing_tiers.h),
  // counting the members only when a percent rule needs them.
  void with_tiers(const PeriodRef& ref, std::vector<Standing>& rows);
  std::vector<std::optional<Standing>> open_ranks(const PeriodRef& ref,
                                                  const std::vector<std::string>& members);
};

}  // namespace bk::service
