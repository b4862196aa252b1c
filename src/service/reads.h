// Reads of one board period wherever it lives: an open period from Redis and the cold tier
// (Leaderboards), an archived one from the history. What the HTTP read API stands on.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cold/archive.h"
#include "service/leaderboards.h"

namespace bk::service {

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
  std::int64_t total = 0;        // members of the period
  std::vector<Standing> rows;    // in listing order
  std::optional<PageMark> next;  // where the next page starts; nullopt after the last row
};

class Reads {
 public:
  Reads(Leaderboards& live, std::function<cold::Archive&()> archive);

  // `period_id` nullopt: the current period. Throws NotFoundError for an unknown board or
  // period, a period that has not begun, one whose history was removed (history.retention)
  // or recorded lost; UsageError for a malformed period id.
  PeriodView locate(const std::string& board, const std::string& period,
                    const std::optional<std::string>& period_id);

  // Up to `limit` rows listed after `after` (from the first without it). Open periods: the
  // page is read where `after` sits in the listing now, so a page never repeats a member
  // listed before it unless that member moved down since, and its ranks are exact when read.
  Page top(const PeriodView& view, const std::optional<PageMark>& after, std::int64_t limit);
  std::optional<Standing> member(const PeriodView& view, const std::string& member);
  // The standings of these members that are on the board, in listing order.
  std::vector<Standing> members(const PeriodView& view, const std::vector<std::string>& members);
  // The member and up to k members each side, in listing order; empty when it is not there.
  std::vector<Standing> around(const PeriodView& view, const std::string& member, std::int64_t k);

  Leaderboards& live() { return live_; }

 private:
  Leaderboards& live_;
  std::function<cold::Archive&()> archive_;
  Page archived_top(const PeriodView& view, const std::optional<PageMark>& after,
                    std::int64_t limit);
};

}  // namespace bk::service
