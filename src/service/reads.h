// Reads of one board period wherever it lives: an open period from Redis and the cold tier
// (Leaderboards), an archived one from the history. What the HTTP read API and the CLI's
// read commands stand on, so both answer the same.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cold/history.h"
#include "service/leaderboards.h"

namespace bk::service {

// A read found nothing where it looked: a period that has not begun, whose history was
// removed (history.retention) or recorded lost, or with nothing to read. A NotFoundError
// (HTTP 404) whose exit code is 1 in the CLI: the command was well formed, the thing read is
// not there (a malformed or unknown name stays a usage error, exit 2).
class NothingToReadError : public NotFoundError {
 public:
  using NotFoundError::NotFoundError;
  ExitCode exit_code() const noexcept override { return ExitCode::failed; }
};

enum class PeriodState { open, archived };

// A period located for reading.
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
  Reads(Leaderboards& live, std::function<cold::History&()> archive);

  // `period_id` nullopt: the current period. Throws NotFoundError for an unknown board or
  // period, NothingToReadError for a period that has not begun, one whose history was
  // removed (history.retention) or recorded lost, or one with nothing to read; UsageError
  // for a malformed period id.
  PeriodView locate(const std::string& board, const std::string& period,
                    const std::optional<std::string>& period_id);

  // Up to `limit` rows listed after `after` (from the first without it). Open periods: the
  // page starts right after the mark's row as it sits when read (located by its listing
  // key, not by a count taken before), so a member that does not move is listed once
  // however others move; ranks are exact when read.
  Page top(const PeriodView& view, const std::optional<PageMark>& after, std::int64_t limit);
  // Up to `count` rows from the 0-based position `offset` (the CLI's top --offset).
  std::vector<Standing> top_at(const PeriodView& view, std::int64_t offset, std::int64_t count);
  std::optional<Standing> member(const PeriodView& view, const std::string& member);
  // The standings of these members that are on the board, in listing order.
  std::vector<Standing> members(const PeriodView& view, const std::vector<std::string>& members);
  // The member and up to k members each side, in listing order; empty when it is not there.
  std::vector<Standing> around(const PeriodView& view, const std::string& member, std::int64_t k);

  // Up to `limit` archived periods of `board` and `period` (a kind or cron name) whose rows
  // are kept, newest first, with ids before `before` (a period id of that kind: UsageError
  // otherwise). Pruned and lost periods are not listed.
  ArchivedPage archived(const std::string& board, const std::string& period,
                        const std::optional<std::string>& before, std::int64_t limit);

  Leaderboards& live() { return live_; }

 private:
  Leaderboards& live_;
  std::function<cold::History&()> archive_;
  Page archived_top(const PeriodView& view, const std::optional<PageMark>& after,
                    std::int64_t limit);
  Page next_page(const PeriodRef& ref, const PageMark& after, std::int64_t limit);
  PeriodView past(PeriodView view);
  // The period's members, or nullopt when PostgreSQL is needed to count them and is down.
  std::optional<std::int64_t> total_of(const PeriodRef& ref);
};

}  // namespace bk::service
