// Open periods are read live; a period that has ended is looked up in the archive first.
#include "service/reads.h"

#include <algorithm>

namespace bk::service {
namespace {

Standing standing(const cold::HistoryRow& h) {
  return Standing{h.rank, h.member, h.points, h.achieved_at, h.name, h.metadata};
}

cold::PeriodKey key_of(const PeriodRef& ref) {
  return {ref.board, ref.spec->name, ref.period.id};
}

std::string describe(const PeriodRef& ref) {
  return ref.board + " " + ref.spec->name + " " + ref.period.id;
}

}  // namespace

Reads::Reads(Leaderboards& live, std::function<cold::Archive&()> archive)
    : live_(live), archive_(std::move(archive)) {}

PeriodView Reads::locate(const std::string& board, const std::string& period,
                         const std::optional<std::string>& period_id) {
  PeriodView view{live_.resolve(board, period, period_id)};
  const Instant now = live_.now();
  if (!period_id || view.ref.period.end > now) {
    if (view.ref.period.start > now) {
      throw NotFoundError(describe(view.ref) + " has not begun (it starts " +
                          format_rfc3339(view.ref.period.start) + ")");
    }
    return view;  // the current period: open
  }
  cold::Archive& archive = archive_();
  const cold::PeriodKey key = key_of(view.ref);
  if (const auto archived = archive.archived_period(key)) {
    if (archived->pruned_at) {
      throw NotFoundError(describe(view.ref) + " was archived, but its rows were removed on " +
                          format_rfc3339(*archived->pruned_at) + " (history.retention)");
    }
    view.state = PeriodState::archived;
    view.archived_members = archived->members;
    return view;
  }
  if (archive.status(key) == cold::PeriodStatus::lost) {
    throw NotFoundError(describe(view.ref) +
                        " was recorded as lost (its hot key vanished before it was archived)");
  }
  // Ended, not archived yet (within its grace, or waiting for tick): still live.
  if (live_.count(view.ref) == 0) {
    throw NotFoundError(describe(view.ref) +
                        " has ended and has nothing to read (nobody scored in it, or it was "
                        "never archived)");
  }
  return view;
}

Page Reads::top(const PeriodView& view, const std::optional<PageMark>& after, std::int64_t limit) {
  if (view.state == PeriodState::archived) return archived_top(view, after, limit);
  const PeriodRef& ref = view.ref;
  Page page;
  const std::int64_t start = after ? live_.listed_through(ref, after->row) : 0;
  // One row more than asked says whether another page follows; after a mark, a few more
  // for the rows the filter below may drop.
  const std::int64_t asked = limit + 1 + (after ? 16 : 0);
  std::vector<Standing> rows;
  if (after) {
    page.total = live_.count(ref);
    rows = live_.top(ref, std::min(start, kMaxReadOffset), asked);
  } else {
    auto first = live_.first_page(ref, limit + 1);
    page.total = first.total;
    rows = std::move(first.rows);
  }
  if (after) {
    // The board may have moved between the two reads: nothing listed at or before the
    // mark belongs on this page.
    const std::int64_t mark = live_.listing_score(ref, after->row);
    const auto first = std::find_if(rows.begin(), rows.end(), [&](const Standing& s) {
      const std::int64_t e = live_.listing_score(ref, s);
      return e > mark || (e == mark && s.member > after->row.member);
    });
    const bool full = static_cast<std::int64_t>(rows.size()) == asked;
    rows.erase(rows.begin(), first);
    if (full && static_cast<std::int64_t>(rows.size()) <= limit) {
      // More members follow, but most of this read was listed before the mark (the board
      // moved under the cursor): a short page, and the next one goes on from its end.
      page.next = rows.empty()
                      ? *after
                      : PageMark{start + static_cast<std::int64_t>(rows.size()), rows.back()};
    }
  }
  if (static_cast<std::int64_t>(rows.size()) > limit) {
    rows.resize(static_cast<std::size_t>(limit));
    page.next = PageMark{start + limit, rows.back()};
  }
  page.rows = std::move(rows);
  return page;
}

Page Reads::archived_top(const PeriodView& view, const std::optional<PageMark>& after,
                         std::int64_t limit) {
  Page page;
  page.total = view.archived_members;
  const std::int64_t from = after ? after->position : 0;
  const auto rows = archive_().history_page(key_of(view.ref), from, limit + 1);
  for (std::size_t i = 0; i < rows.size() && static_cast<std::int64_t>(i) < limit; ++i)
    page.rows.push_back(standing(rows[i]));
  if (static_cast<std::int64_t>(rows.size()) > limit) {
    page.next = PageMark{rows[static_cast<std::size_t>(limit) - 1].position, page.rows.back()};
  }
  return page;
}

std::optional<Standing> Reads::member(const PeriodView& view, const std::string& member) {
  const auto found = members(view, {member});
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<Standing> Reads::members(const PeriodView& view,
                                     const std::vector<std::string>& members) {
  std::vector<Standing> out;
  if (view.state == PeriodState::archived) {
    for (const auto& h : archive_().history_of(key_of(view.ref), members))
      out.push_back(standing(h));
    return out;
  }
  for (auto& s : live_.ranks(view.ref, members)) {
    if (s) out.push_back(std::move(*s));
  }
  std::sort(out.begin(), out.end(), [&](const Standing& a, const Standing& b) {
    const std::int64_t ea = live_.listing_score(view.ref, a);
    const std::int64_t eb = live_.listing_score(view.ref, b);
    return ea != eb ? ea < eb : a.member < b.member;
  });
  return out;
}

std::vector<Standing> Reads::around(const PeriodView& view, const std::string& member,
                                    std::int64_t k) {
  if (view.state == PeriodState::open) return live_.around(view.ref, member, k);
  cold::Archive& archive = archive_();
  const cold::PeriodKey key = key_of(view.ref);
  const auto self = archive.history_of(key, {member});
  if (self.empty()) return {};
  const std::int64_t from = std::max<std::int64_t>(0, self.front().position - 1 - k);
  std::vector<Standing> out;
  for (const auto& h : archive.history_page(key, from, self.front().position - from + k))
    out.push_back(standing(h));
  return out;
}

}  // namespace bk::service
