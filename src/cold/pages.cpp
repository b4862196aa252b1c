// The counted pages of a period's cold rows, kept exact by each spill (see pages.h), and the
// statements that read and write them.
#include "cold/pages.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>

#include "cold/statements.h"

namespace bk::cold {

StatementTable page_statements(const std::string& q) {
  const std::string table = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string& period = kInPeriod;
  const std::string page_rows =
      " FROM unnest($4::bigint[], $5::text[], $6::bigint[])"
      " AS u(encoded, member, rows)";
  return {
      // The period's first page, at the smallest key there is.
      {"bk_cold_page_floor",
       "INSERT INTO " + pages +
           " (board, period, period_id, encoded, member, rows)"
           " VALUES ($1, $2, $3, -9223372036854775808, '', 0) ON CONFLICT DO NOTHING"},
      // The pages from the one before the page holding ($4, $5) on (all of them: the smallest
      // key), for a spill whose rows all come at or after ($4, $5).
      {"bk_cold_pages_from",
       "WITH f AS (SELECT encoded, member FROM " + pages + " WHERE" + period +
           "AND (encoded, member) <= ($4, $5 COLLATE \"C\") ORDER BY encoded DESC, member"
           " DESC OFFSET 1 LIMIT 1) SELECT encoded, member, rows FROM " +
           pages + " WHERE" + period +
           "AND (NOT EXISTS (SELECT 1 FROM f) OR (encoded, member) >= (SELECT encoded,"
           " member FROM f)) ORDER BY encoded, member"},
      // The last listing key of one page's rows (bounds as below).
      {"bk_cold_page_last",
       "SELECT encoded, member FROM " + table + " WHERE" + period +
           "AND (encoded, member) >= ($4, $5 COLLATE \"C\") AND ($6 OR (encoded, member) <"
           " ($7, $8 COLLATE \"C\")) ORDER BY encoded DESC, member DESC LIMIT 1"},
      // Every $9-th listing key of one page's rows (from the page's key, up to the next page's
      // unless $6, the last page), with its 0-based place in the page.
      {"bk_cold_page_cuts",
       "SELECT encoded, member, i FROM (SELECT encoded, member, row_number() OVER"
       " (ORDER BY encoded, member) - 1 AS i FROM " +
           table + " WHERE" + period +
           "AND (encoded, member) >= ($4, $5 COLLATE \"C\") AND ($6 OR (encoded, member) <"
           " ($7, $8 COLLATE \"C\"))) x WHERE i > 0 AND i % $9 = 0 ORDER BY i"},
      {"bk_cold_pages_set", "UPDATE " + pages + " p SET rows = u.rows" + page_rows +
                                " WHERE p.board = $1 AND p.period = $2 AND p.period_id = $3"
                                " AND p.encoded = u.encoded AND p.member = u.member"},
      {"bk_cold_pages_add", "INSERT INTO " + pages +
                                " (board, period, period_id, encoded, member, rows)"
                                " SELECT $1, $2, $3, u.encoded, u.member, u.rows" +
                                page_rows},
      {"bk_cold_pages_drop", "DELETE FROM " + pages +
                                 " p USING unnest($4::bigint[], $5::text[]) AS u(encoded, member)"
                                 " WHERE p.board = $1 AND p.period = $2 AND p.period_id = $3"
                                 " AND p.encoded = u.encoded AND p.member = u.member"},
  };
}

namespace {

const ListingKey kSmallestKey{std::numeric_limits<std::int64_t>::min(), std::string()};

}  // namespace

PageBook::PageBook(pqxx::work& w, const PeriodKey& period,
                   const std::vector<const ColdRow*>& written, bool replacing)
    : w_(w), period_(period) {
  read_pages(written, replacing);
  for (const ColdRow* r : written) {
    page_of({r->encoded, r->member}).added.emplace_back(r->encoded, r->member);
  }
  find_last_keys_of_full_pages();
}

void PageBook::read_pages(const std::vector<const ColdRow*>& written, bool replacing) {
  // Rows replaced may have been anywhere: then every page is read; else those from the
  // page before the first row's on (only these can change).
  ListingKey from = kSmallestKey;
  if (!replacing && !written.empty()) {
    const auto first =
        std::min_element(written.begin(), written.end(), [](const ColdRow* a, const ColdRow* b) {
          return std::tie(a->encoded, a->member) < std::tie(b->encoded, b->member);
        });
    from = {(*first)->encoded, (*first)->member};
  }
  const PeriodKey& k = period_;
  for (const auto& r : w_.exec_prepared("bk_cold_pages_from", k.board, k.period, k.period_id,
                                        from.first, from.second)) {
    pages_.push_back({{r[0].as<std::int64_t>(), r[1].as<std::string>()},
                      r[2].as<std::int64_t>(),
                      0,
                      {},
                      std::nullopt});
  }
  if (pages_.empty()) {  // the period's first page
    w_.exec_prepared("bk_cold_page_floor", k.board, k.period, k.period_id);
    pages_.push_back({kSmallestKey, 0, 0, {}, std::nullopt});
  }
}

void PageBook::find_last_keys_of_full_pages() {
  // A page about to be cut: if all its new rows come after its old ones (a spill's
  // chunks arrive in listing order), the cuts are found here, not by the database.
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    Page& p = pages_[i];
    if (p.rows == 0 || p.rows + static_cast<std::int64_t>(p.added.size()) <= kPageMaxRows) {
      continue;
    }
    const auto [next, last] = next_key(i);
    const pqxx::result r =
        w_.exec_prepared("bk_cold_page_last", period_.board, period_.period, period_.period_id,
                         p.key.first, p.key.second, last, next->first, next->second);
    if (!r.empty()) p.last_before.emplace(r[0][0].as<std::int64_t>(), r[0][1].as<std::string>());
  }
}

void PageBook::write() {
  for (std::size_t i = 0; i < pages_.size(); ++i) update(i);
  const PeriodKey& k = period_;
  if (drop_.any) {
    w_.exec_prepared("bk_cold_pages_drop", k.board, k.period, k.period_id, drop_.e.done(),
                     drop_.m.done());
  }
  if (set_.any) {
    w_.exec_prepared("bk_cold_pages_set", k.board, k.period, k.period_id, set_.e.done(),
                     set_.m.done(), set_.n.done());
  }
  if (add_.any) {
    w_.exec_prepared("bk_cold_pages_add", k.board, k.period, k.period_id, add_.e.done(),
                     add_.m.done(), add_.n.done());
  }
}

void PageBook::Keys::put(const ListingKey& k, std::optional<std::int64_t> rows) {
  e.integer(k.first);
  m.text(k.second);
  if (rows) n.integer(*rows);
  any = true;
}

PageBook::Page& PageBook::page_of(const ListingKey& k) {
  // The pages read start at or before every key looked up (the first page of a period
  // starts at the smallest key there is).
  auto it = std::upper_bound(pages_.begin(), pages_.end(), k,
                             [](const ListingKey& key, const Page& p) { return key < p.key; });
  return *std::prev(it);
}

std::pair<const ListingKey*, bool> PageBook::next_key(std::size_t i) const {
  const bool last = i + 1 == pages_.size();
  return {last ? &pages_[i].key : &pages_[i + 1].key, last};
}

void PageBook::update(std::size_t i) {
  Page& p = pages_[i];
  if (p.removed == 0 && p.added.empty()) return;
  const std::int64_t kept = p.rows - p.removed;  // rows from before this transaction
  const std::int64_t now = kept + static_cast<std::int64_t>(p.added.size());
  if (now == 0 && p.key != kSmallestKey) {
    drop_.put(p.key, std::nullopt);
    return;
  }
  if (now <= kPageMaxRows) {
    set_.put(p.key, now);
    return;
  }
  std::sort(p.added.begin(), p.added.end());
  if (kept == 0 || (p.last_before && *p.last_before < p.added.front())) {
    cut_after_old_rows(p, kept);
  } else {
    cut_by_database(i, now);
  }
}

void PageBook::cut_after_old_rows(Page& p, std::int64_t kept) {
  // The old rows first, then ours (sorted): cut at every kPageRows-th row.
  const auto added = static_cast<std::int64_t>(p.added.size());
  const std::int64_t first = std::max<std::int64_t>(0, kPageRows - kept);
  set_.put(p.key, kept + first);
  for (std::int64_t at = first; at < added; at += kPageRows) {
    add_.put(p.added[static_cast<std::size_t>(at)], std::min(kPageRows, added - at));
  }
}

void PageBook::cut_by_database(std::size_t i, std::int64_t now) {
  // Mixed with older rows: the database finds the cuts in listing order.
  const Page& p = pages_[i];
  const auto [next, last] = next_key(i);
  const pqxx::result cuts =
      w_.exec_prepared("bk_cold_page_cuts", period_.board, period_.period, period_.period_id,
                       p.key.first, p.key.second, last, next->first, next->second, kPageRows);
  std::int64_t from = 0;
  std::optional<ListingKey> key;  // of the page being counted; none: p's own
  const auto close = [&](std::int64_t to) {
    if (key) {
      add_.put(*key, to - from);
    } else {
      set_.put(p.key, to - from);
    }
  };
  for (const auto& c : cuts) {
    const std::int64_t at = c[2].as<std::int64_t>();
    close(at);
    key.emplace(c[0].as<std::int64_t>(), c[1].as<std::string>());
    from = at;
  }
  close(now);
}

}  // namespace bk::cold
