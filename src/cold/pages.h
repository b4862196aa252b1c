// The counted pages of a period's cold rows (sql/007_cold_pages.sql), kept exact by each spill
// (internal to bk_cold): reads count and locate rows through them without a full scan.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cold/pg.h"
#include "cold/types.h"

namespace bk::cold {

// A page grown past kPageMaxRows is cut into pages of kPageRows; a page left empty is dropped
// (its range joins the page before it), except the first, which starts at the smallest key.
inline constexpr std::int64_t kPageRows = 500;
inline constexpr std::int64_t kPageMaxRows = 2 * kPageRows;

using ListingKey = std::pair<std::int64_t, std::string>;  // (encoded, member): bytewise

// A period's pages in one spill transaction, kept exact: made before the rows are written
// (reads the pages, under the lock taken with the version; places each row about to be
// written), told of every row replaced, and written after the rows.
class PageBook {
 public:
  // `replacing`: the rows may replace older ones (see replaced()).
  PageBook(pqxx::work& w, const PeriodKey& period, const std::vector<const ColdRow*>& written,
           bool replacing);

  // A row this transaction replaced, by its listing key before.
  void replaced(const ListingKey& old) { ++page_of(old).removed; }

  // After the rows are written: counts, cuts, empty pages dropped.
  void write();

 private:
  struct Page {
    ListingKey key;
    std::int64_t rows = 0;          // as read at the start of the transaction
    std::int64_t removed = 0;       // rows that left it in this transaction (replaced)
    std::vector<ListingKey> added;  // rows written into it in this transaction
    // Of a page about to grow too big: its last key before this transaction.
    std::optional<ListingKey> last_before;
  };
  struct Keys {  // page keys (and counts) as array literals
    pg::ArrayLiteral e, m, n;
    bool any = false;
    void put(const ListingKey& k, std::optional<std::int64_t> rows);
  };

  void read_pages(const std::vector<const ColdRow*>& written, bool replacing);
  void find_last_keys_of_full_pages();
  Page& page_of(const ListingKey& k);
  void update(std::size_t i);
  void cut_after_old_rows(Page& p, std::int64_t kept);
  void cut_by_database(std::size_t i, std::int64_t now);
  // The key of the page after page i, and whether page i is the last.
  std::pair<const ListingKey*, bool> next_key(std::size_t i) const;

  pqxx::work& w_;
  const PeriodKey& period_;
  std::vector<Page> pages_;
  Keys set_, add_, drop_;
};

}  // namespace bk::cold
