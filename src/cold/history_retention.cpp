// History retention (History::prune_history, see history.h): the due periods grouped by the
// month partition holding their rows; a month whose archived periods are all due is dropped
// whole, otherwise the due periods' rows are deleted. One month per transaction.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "cold/history_impl.h"

namespace bk::cold {

struct History::Pruning {
  // An archived period whose rows are kept, as read from the periods table.
  struct Candidate {
    std::string board, period, period_id, start;  // start: as PostgreSQL gave it
    Instant end;
    std::int64_t members = 0;
    std::optional<std::int64_t> part;  // a large period: its own table of history_large
  };
  using Dated = std::pair<Instant, Candidate>;  // (period start, period)

  Pruning(Impl& impl, const DueFn& is_due);

  std::map<date::year_month, std::vector<Dated>> due_by_month(Instant ended_before,
                                                              std::int64_t max_periods);
  // Prunes one month's due periods; false when another process holds the pruning lock.
  bool prune_month(const Month& month, std::vector<Dated>& periods);
  // Drops the month's partition if every archived period in it is due; then `periods` are all
  // of them. False (nothing done) otherwise.
  bool drop_whole_month(pqxx::work& w, const Month& month, std::vector<Dated>& periods);
  void prune_periods(pqxx::work& w, const std::vector<Dated>& periods);
  // A large period's rows are its own table, dropped whole.
  void drop_large(pqxx::work& w, const Candidate& c);
  std::vector<Dated> candidates_of(const pqxx::result& r) const;

  Impl& m;
  const DueFn& due;
  const std::string q;
  const std::string columns;
  const std::string unpruned = " status = 'archived' AND pruned_at IS NULL";
  Pruned pruned;
};

History::Pruning::Pruning(Impl& impl, const DueFn& is_due)
    : m(impl),
      due(is_due),
      q(impl.link->q),
      columns("board, period, period_id, period_start::text, " + epoch_ms("period_start") + ", " +
              epoch_ms("period_end") + ", members, history_part") {}

History::Pruned History::prune_history(const DueFn& due, Instant ended_before, bool dry_run,
                                       std::int64_t max_periods) {
  Pruning pruning(*impl_, due);
  for (auto& [month, periods] : pruning.due_by_month(ended_before, max_periods)) {
    if (dry_run) {
      pruning.pruned.periods += static_cast<std::int64_t>(periods.size());
      for (const auto& p : periods) pruning.pruned.rows += p.second.members;
      continue;
    }
    if (!pruning.prune_month(month_of(pruning.q, month), periods)) break;
  }
  return pruning.pruned;
}

std::vector<History::Pruning::Dated> History::Pruning::candidates_of(const pqxx::result& r) const {
  std::vector<Dated> out;
  for (const auto& row : r) {
    Candidate c{row[0].as<std::string>(),
                row[1].as<std::string>(),
                row[2].as<std::string>(),
                row[3].as<std::string>(),
                from_epoch_ms(row[5].as<std::int64_t>()),
                row[6].as<std::int64_t>(),
                std::nullopt};
    if (!row[7].is_null()) c.part = row[7].as<std::int64_t>();
    out.emplace_back(from_epoch_ms(row[4].as<std::int64_t>()), std::move(c));
  }
  return out;
}

std::map<date::year_month, std::vector<History::Pruning::Dated>> History::Pruning::due_by_month(
    Instant ended_before, std::int64_t max_periods) {
  std::map<date::year_month, std::vector<Dated>> by_month;
  m.guarded("finding history past its retention", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r =
        w.exec_params("SELECT " + columns + " FROM " + q + ".periods WHERE" + unpruned +
                          " AND period_end < $1 ORDER BY period_start LIMIT $2",
                      ts(ended_before), max_periods);
    for (auto& [start, c] : candidates_of(r)) {
      if (!due(c.period, c.end)) continue;
      by_month[month_containing(start)].emplace_back(start, std::move(c));
    }
    return 0;
  });
  return by_month;
}

bool History::Pruning::prune_month(const Month& month, std::vector<Dated>& periods) {
  const std::string lock = retention_lock(m.link->schema);
  return m.guarded("pruning history (" + month.partition + ")", [&] {
    pqxx::work w(m.connection());
    if (!w.exec_params1("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", lock)[0]
             .as<bool>()) {
      pruned.busy = true;
      return false;
    }
    // Waits for archives writing into the month (and readers) at most this long; the next
    // tick tries again.
    w.exec0("SET LOCAL lock_timeout = '10s'");
    if (!drop_whole_month(w, month, periods)) prune_periods(w, periods);
    w.commit();
    pruned.periods += static_cast<std::int64_t>(periods.size());
    return true;
  });
}

bool History::Pruning::drop_whole_month(pqxx::work& w, const Month& month,
                                        std::vector<Dated>& periods) {
  if (!w.exec_params1("SELECT to_regclass($1) IS NOT NULL", month.partition)[0].as<bool>()) {
    return false;
  }
  w.exec0("LOCK TABLE " + month.partition + " IN ACCESS EXCLUSIVE MODE");
  // Every archived period whose rows live in this month must be due, whatever its name.
  std::vector<Dated> in_month =
      candidates_of(w.exec_params("SELECT " + columns + " FROM " + q + ".periods WHERE" + unpruned +
                                      " AND period_start >= $1 AND period_start < $2",
                                  ts(month.from), ts(month.to)));
  if (!std::all_of(in_month.begin(), in_month.end(),
                   [&](const Dated& p) { return due(p.second.period, p.second.end); })) {
    return false;
  }
  w.exec0("DROP TABLE " + month.partition);
  ++pruned.partitions;
  for (const auto& p : in_month) {
    if (p.second.part) drop_large(w, p.second);
  }
  w.exec_params("UPDATE " + q + ".periods SET pruned_at = now() WHERE" + unpruned +
                    " AND period_start >= $1 AND period_start < $2",
                ts(month.from), ts(month.to));
  periods = std::move(in_month);
  for (const auto& p : periods) pruned.rows += p.second.members;
  return true;
}

void History::Pruning::prune_periods(pqxx::work& w, const std::vector<Dated>& periods) {
  const std::string delete_sql = "DELETE FROM " + q +
                                 ".history_rows WHERE board = $1 AND period = $2 AND"
                                 " period_id = $3 AND period_start = $4::timestamptz";
  const std::string mark_sql = "UPDATE " + q +
                               ".periods SET pruned_at = now() WHERE board = $1 AND period = $2"
                               " AND period_id = $3 AND" +
                               unpruned;
  for (const auto& [start, c] : periods) {
    if (c.part) {
      drop_large(w, c);
      pruned.rows += c.members;
    } else {
      const pqxx::result d = w.exec_params(delete_sql, c.board, c.period, c.period_id, c.start);
      pruned.rows += static_cast<std::int64_t>(d.affected_rows());
    }
    w.exec_params(mark_sql, c.board, c.period, c.period_id);
  }
}

void History::Pruning::drop_large(pqxx::work& w, const Candidate& c) {
  w.exec0("DROP TABLE IF EXISTS " + q + ".history_large_" + std::to_string(*c.part));
  ++pruned.partitions;
}

}  // namespace bk::cold
