// Open periods are read live; a period that has ended is looked up in the archive first.
#include "service/reads.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "service/live_reads.h"
#include "service/standing_tiers.h"
#include "service/tier_adapters.h"

namespace bk::service {
namespace {

Standing standing(const cold::HistoryRow& h) {
  Standing s{h.rank, h.member, h.points, h.achieved_at, h.name, h.metadata};
  s.tier = h.tier;  // frozen at archive time
  return s;
}

cold::PeriodKey key_of(const PeriodRef& ref) {
  return {ref.board, ref.spec->name, ref.period.id};
}

std::string describe(const PeriodRef& ref) {
  return ref.board + " " + ref.spec->name + " " + ref.period.id;
}

// A page of `limit` rows from `rows` (read one longer: the extra row says another page
// follows), whose first row is at the 0-based `position`.
Page paged(std::optional<std::int64_t> total, std::int64_t position, std::vector<Standing> rows,
           std::int64_t limit) {
  Page page{total, {}, std::nullopt};
  if (static_cast<std::int64_t>(rows.size()) > limit) {
    rows.resize(static_cast<std::size_t>(limit));
    page.next = PageMark{position + limit, rows.back()};
  }
  page.rows = std::move(rows);
  return page;
}

}  // namespace

Reads::Reads(const Config& config, Clock clock, LiveReads& live, PostgresTier& postgres)
    : config_(config), clock_(clock), live_(live), postgres_(postgres) {}

void Reads::read_history_from(std::function<cold::History&()> archive) {
  archive_ = std::move(archive);
}

cold::History& Reads::archive() {
  if (!archive_) {
    throw UsageError(
        "a read of a period that has ended needs the history, and none was given "
        "(Reads::read_history_from)");
  }
  return archive_();
}

void Reads::share_cold_ranks(std::shared_ptr<ColdIndexes> indexes) {
  live_.share_cold_ranks(std::move(indexes));
}

bool Reads::load_cold_ranks(const PeriodRef& ref) {
  return live_.load_cold_ranks(ref);
}

void Reads::read_from_replica(std::function<cold::ColdStore&()> replica,
                              std::shared_ptr<ReplicaReads> reads) {
  postgres_.read_from(std::move(replica), std::move(reads));
}

std::vector<PeriodStatus> Reads::periods(const std::string& board) {
  return live_.periods(board);
}

BoardsPage Reads::boards(const std::optional<std::string>& after, std::int64_t limit) {
  return live_.boards(after, limit);
}

PeriodView Reads::locate(const std::string& board, const std::string& period,
                         const std::optional<std::string>& period_id) {
  const Instant now = clock_.now();
  PeriodView view{resolve_period(config_, board, period, period_id, now)};
  if (view.ref.period.start > now) {
    throw NothingToReadError(describe(view.ref) + " has not begun (it starts " +
                             format_rfc3339(view.ref.period.start) + ")");
  }
  if (view.ref.period.end > now) return view;  // open (the current one, or a window's)
  return past(std::move(view));
}

// A period that has ended: archived, lost, or still live (within its grace, or waiting for
// tick).
PeriodView Reads::past(PeriodView view) {
  cold::History& history = archive();
  const cold::PeriodKey key = key_of(view.ref);
  if (const auto archived = history.archived_period(key)) {
    if (archived->pruned_at) {
      throw NothingToReadError(describe(view.ref) + " was archived, but its rows were removed on " +
                               format_rfc3339(*archived->pruned_at) + " (history.retention)");
    }
    view.state = PeriodState::archived;
    view.archived_members = archived->members;
    return view;
  }
  if (history.status(key) == cold::PeriodStatus::lost) {
    throw NothingToReadError(describe(view.ref) +
                             " was recorded as lost (its hot key vanished before it was archived)");
  }
  if (live_.count(view.ref) == 0) {
    throw NothingToReadError(describe(view.ref) +
                             " has ended and has nothing to read (nobody scored in it, or it was "
                             "never archived)");
  }
  view.state = PeriodState::closed;
  return view;
}

Page Reads::top(const PeriodView& view, const std::optional<PageMark>& after, std::int64_t limit) {
  if (view.state == PeriodState::archived) return archived_top(view, after, limit);
  if (after) return next_page(view.ref, *after, limit);
  auto first = live_.first_page(view.ref, limit + 1);
  // The page's total is the count tiers need: none when it could not be had.
  attach_tiers(view.ref.config->tiers, first.rows, [&] { return first.total; });
  return paged(first.total, 0, std::move(first.rows), limit);
}

Page Reads::next_page(const PeriodRef& ref, const PageMark& after, std::int64_t limit) {
  auto following = live_.listed_after(ref, after.row, limit + 1);
  const auto total = following.total ? following.total : total_of(ref);
  attach_tiers(ref.config->tiers, following.rows, [&] { return total; });
  return paged(total, following.position, std::move(following.rows), limit);
}

void Reads::with_tiers(const PeriodRef& ref, std::vector<Standing>& rows) {
  attach_tiers(ref.config->tiers, rows, [&] { return total_of(ref); });
}

std::optional<std::int64_t> Reads::total_of(const PeriodRef& ref) {
  try {
    return live_.count(ref);
  } catch (const UnavailableError& e) {
    if (e.backend() != Backend::postgres) throw;
    return std::nullopt;
  }
}

Page Reads::archived_top(const PeriodView& view, const std::optional<PageMark>& after,
                         std::int64_t limit) {
  const std::int64_t from = after ? after->position : 0;
  std::vector<Standing> rows;
  for (const auto& h : archive().history_page(key_of(view.ref), from, limit + 1))
    rows.push_back(standing(h));
  return paged(view.archived_members, from, std::move(rows), limit);
}

std::vector<Standing> Reads::top_at(const PeriodView& view, std::int64_t offset,
                                    std::int64_t count) {
  if (view.state != PeriodState::archived) {
    auto rows = live_.top(view.ref, offset, count);
    with_tiers(view.ref, rows);
    return rows;
  }
  check_bound(view.ref, "count", count, kMaxReadRows);
  check_bound(view.ref, "offset", offset, kMaxReadOffset);
  std::vector<Standing> out;
  if (count == 0) return out;
  // Positions are 1-based and dense: the rows after position `offset`.
  for (const auto& h : archive().history_page(key_of(view.ref), offset, count))
    out.push_back(standing(h));
  return out;
}

std::optional<Standing> Reads::member(const PeriodView& view, const std::string& member) {
  const auto found = members(view, {member});
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<std::optional<Standing>> Reads::ranks(const PeriodView& view,
                                                  const std::vector<std::string>& members) {
  if (view.state != PeriodState::archived) return open_ranks(view.ref, members);
  check_bound(view.ref, "members", static_cast<std::int64_t>(members.size()), kMaxReadRows);
  std::unordered_map<std::string, Standing> found;
  for (const auto& h : archive().history_of(key_of(view.ref), members))
    found.emplace(h.member, standing(h));
  std::vector<std::optional<Standing>> out;
  out.reserve(members.size());
  for (const std::string& m : members) {
    const auto it = found.find(m);
    out.push_back(it == found.end() ? std::nullopt : std::optional<Standing>(it->second));
  }
  return out;
}

std::optional<BeforeAfter> Reads::update_standings(const PeriodRef& ref, const std::string& member,
                                                   const hot::HotStanding& facts) {
  auto found = live_.update_standings(ref, member, facts);
  if (!found || ref.config->tiers.empty()) return found;
  // Both standings in one call: a percent rule counts the period once.
  const std::array<std::optional<Standing>*, 2> both{&found->before, &found->after};
  std::vector<Standing> rows;
  for (std::optional<Standing>* s : both) {
    if (*s) rows.push_back(std::move(**s));
  }
  with_tiers(ref, rows);
  auto next = rows.begin();
  for (std::optional<Standing>* s : both) {
    if (*s) *s = std::move(*next++);
  }
  return found;
}

std::vector<std::optional<Standing>> Reads::open_ranks(const PeriodRef& ref,
                                                       const std::vector<std::string>& members) {
  // A percent rule's member count from the ranks' own read when it had it (a spilled
  // period's: one statement more in its snapshot), else counted apart.
  std::optional<std::int64_t> counted;
  const Tiers& tiers = ref.config->tiers;
  const bool percent = std::any_of(tiers.begin(), tiers.end(),
                                   [](const TierRule& r) { return r.kind == TierKind::percent; });
  auto found = live_.ranks(ref, members, percent ? &counted : nullptr);
  std::vector<Standing> rows;
  for (auto& s : found) {
    if (s) rows.push_back(std::move(*s));
  }
  attach_tiers(tiers, rows, [&] { return counted ? counted : total_of(ref); });
  for (std::size_t i = 0, r = 0; i < found.size(); ++i) {
    if (found[i]) found[i] = std::move(rows[r++]);
  }
  return found;
}

std::vector<Standing> Reads::members(const PeriodView& view,
                                     const std::vector<std::string>& members) {
  std::vector<Standing> out;
  if (view.state == PeriodState::archived) {
    check_bound(view.ref, "members", static_cast<std::int64_t>(members.size()), kMaxReadRows);
    for (const auto& h : archive().history_of(key_of(view.ref), members))
      out.push_back(standing(h));
    return out;
  }
  for (auto& s : open_ranks(view.ref, members)) {
    if (s) out.push_back(std::move(*s));
  }
  std::sort(out.begin(), out.end(), [&](const Standing& a, const Standing& b) {
    const std::int64_t ea = live_.listing_score(view.ref, a);
    const std::int64_t eb = live_.listing_score(view.ref, b);
    return ea != eb ? ea < eb : a.member < b.member;
  });
  return out;
}

std::int64_t Reads::count(const PeriodView& view) {
  return view.state == PeriodState::archived ? view.archived_members : live_.count(view.ref);
}

std::vector<Standing> Reads::around(const PeriodView& view, const std::string& member,
                                    std::int64_t k) {
  if (view.state != PeriodState::archived) {
    auto rows = live_.around(view.ref, member, k);
    with_tiers(view.ref, rows);
    return rows;
  }
  check_bound(view.ref, "k", k, kMaxReadRows / 2);
  cold::History& history = archive();
  const cold::PeriodKey key = key_of(view.ref);
  const auto self = history.history_of(key, {member});
  if (self.empty()) return {};
  const std::int64_t from = std::max<std::int64_t>(0, self.front().position - 1 - k);
  std::vector<Standing> out;
  for (const auto& h : history.history_page(key, from, self.front().position - from + k))
    out.push_back(standing(h));
  return out;
}

ArchivedPage Reads::archived(const std::string& board, const std::string& period,
                             const std::optional<std::string>& before, std::int64_t limit) {
  const PeriodSpec& spec = period_spec(board_entry(config_, board), board, period);
  if (before) resolve_period(config_, board, period, before, clock_.now());  // or UsageError
  ArchivedPage page;
  page.periods = archive().archived_periods(board, spec.name, before.value_or(""), limit + 1);
  if (static_cast<std::int64_t>(page.periods.size()) > limit) {
    page.periods.resize(static_cast<std::size_t>(limit));
    page.next = page.periods.back().period_id;
  }
  return page;
}

}  // namespace bk::service
