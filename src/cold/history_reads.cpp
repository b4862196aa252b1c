// The history store's reads (see history.h): a period's rows page by page through the
// listing index, the rows of some members, and the archived periods of a board.
#include <algorithm>

#include "cold/history_impl.h"
#include "core/profile.h"

namespace bk::cold {

std::vector<HistoryRow> History::history(const PeriodKey& key, std::int64_t limit) {
  std::vector<HistoryRow> out;
  history_pages(key, limit, [&out](const std::vector<HistoryRow>& page) {
    out.insert(out.end(), page.begin(), page.end());
  });
  return out;
}

std::vector<LeagueResult> History::league_cohort(const PeriodKey& key, const std::string& cohort,
                                                 const std::string& member) {
  LeagueStore store(impl_->link);
  return cohort.empty() ? store.cohort_of(key, member) : store.cohort(key, cohort);
}

namespace {

std::vector<HistoryRow> history_rows(const pqxx::result& r) {
  std::vector<HistoryRow> rows;
  rows.reserve(r.size());
  for (const auto& row : r) {
    HistoryRow h{row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::string>(),
                 row[3].as<std::int64_t>(), std::nullopt};
    if (!row[4].is_null()) h.achieved_at = from_epoch_ms(row[4].as<std::int64_t>());
    if (!row[5].is_null()) h.name = row[5].as<std::string>();
    // jsonb's text reorders and spaces the object: the same text as Redis keeps instead.
    if (!row[6].is_null()) h.metadata = compact_metadata(row[6].as<std::string>());
    if (!row[7].is_null()) h.tier = row[7].as<std::string>();
    rows.push_back(std::move(h));
  }
  return rows;
}

}  // namespace

std::vector<HistoryRow> History::history_page(const PeriodKey& key, std::int64_t after,
                                              std::int64_t limit) {
  Impl& m = *impl_;
  return m.guarded("reading history", [&] {
    pqxx::work w(m.connection());
    return history_rows(
        w.exec_prepared("bk_archive_history", key.board, key.period, key.period_id, after, limit));
  });
}

std::vector<HistoryRow> History::history_of(const PeriodKey& key,
                                            const std::vector<std::string>& members) {
  if (members.empty()) return {};
  pg::ArrayLiteral list;
  for (const std::string& member : members) list.text(member);
  Impl& m = *impl_;
  return m.guarded("reading history", [&] {
    pqxx::work w(m.connection());
    return history_rows(w.exec_prepared("bk_archive_history_of", key.board, key.period,
                                        key.period_id, list.done()));
  });
}

void History::history_pages(const PeriodKey& key, std::int64_t limit,
                            const std::function<void(const std::vector<HistoryRow>&)>& page) {
  constexpr std::int64_t kPage = 10000;
  for (std::int64_t done = 0, after = 0; done < limit;) {
    const std::vector<HistoryRow> rows = history_page(key, after, std::min(kPage, limit - done));
    if (rows.empty()) return;
    page(rows);
    done += static_cast<std::int64_t>(rows.size());
    after = rows.back().position;
  }
}

std::optional<PeriodInfo> History::archived_period(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("reading a period", [&]() -> std::optional<PeriodInfo> {
    pqxx::work w(m.connection());
    const pqxx::result r =
        w.exec_prepared("bk_archive_period", key.board, key.period, key.period_id);
    if (r.empty()) return std::nullopt;
    PeriodInfo info{key, from_epoch_ms(r[0][0].as<std::int64_t>()),
                    from_epoch_ms(r[0][1].as<std::int64_t>())};
    if (!r[0][2].is_null()) info.pruned_at = from_epoch_ms(r[0][2].as<std::int64_t>());
    info.members = r[0][3].as<std::int64_t>();
    return info;
  });
}

std::vector<ArchivedPeriod> History::archived_periods(const std::string& board,
                                                      const std::string& period,
                                                      const std::string& before,
                                                      std::int64_t limit) {
  Impl& m = *impl_;
  return m.guarded("listing archived periods", [&] {
    pqxx::work w(m.connection());
    std::vector<ArchivedPeriod> out;
    for (const auto& r : w.exec_prepared("bk_archive_periods", board, period, before, limit)) {
      out.push_back(
          {r[0].as<std::string>(), from_epoch_ms(r[1].as<std::int64_t>()),
           from_epoch_ms(r[2].as<std::int64_t>()), r[3].as<std::int64_t>(),
           from_epoch_ms(r[4].as<std::int64_t>()),
           r[5].is_null() ? std::nullopt : std::optional<std::string>(r[5].as<std::string>())});
    }
    return out;
  });
}

}  // namespace bk::cold
