// Snapshot reads of the cold tier (see cold_reader.h): the counted pages say how many rows come
// before a key, then one walk within a page; listing pages are keyset reads on the primary order.
#include "cold/cold_reader.h"

#include <algorithm>
#include <utility>

#include "cold/cold_store.h"
#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"

namespace bk::cold {

using pg::ArrayLiteral;
using pg::guarded;
using pg::Link;

namespace {

using ReadTxn = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

// A period's cold rows: the sum of its counted pages. Sent unprepared (one round trip with its
// parameters): a reader counts once a spill generation, so a preparation would double the
// cost of the read that counts (a tier's percent rule on a new connection: bench row 28).
std::string count_sql(const std::string& q) {
  return "SELECT coalesce(sum(rows), 0)::bigint FROM " + q + ".cold_pages WHERE" + kInPeriod;
}

// Counts: the page counts before a key, then a walk within one page.
StatementTable count_statements(const std::string& q) {
  const std::string table = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string& period = kInPeriod;
  StatementTable t;
  const auto add = [&t](std::string name, std::string sql) {
    t.push_back({std::move(name), std::move(sql)});
  };
  // Reads: the page counts before a key, then a walk within one page.
  const std::string in_period = " AND board = $1 AND period = $2 AND period_id = $3";
  // Cold rows listed before the key (E, M): the counted pages before the page holding it,
  // plus that page's rows before it. No row when the period has no pages.
  const auto count_before = [&](const std::string& e, const std::string& m) {
    const std::string key = "(" + e + ", " + m + " COLLATE \"C\")";
    return "SELECT coalesce((SELECT sum(rows) FROM " + pages +
           " WHERE (encoded, member) < (f.encoded, f.member)" + in_period +
           "), 0)::bigint + (SELECT count(*) FROM " + table +
           " WHERE (encoded, member) >= (f.encoded, f.member) AND (encoded, member) < " + key +
           // Implied by the row comparisons, but the planner estimates these well: without
           // them it can take a row range for most of the table and scan it all.
           " AND encoded >= f.encoded AND encoded <= " + e + in_period +
           ") FROM (SELECT encoded, member FROM " + pages + " WHERE" + period +
           "AND (encoded, member) <= " + key + " ORDER BY encoded DESC, member DESC LIMIT 1) f";
  };
  add("bk_cold_count_before", count_before("$4", "$5"));
  // The same for many keys (E, ''): the rows before each page summed once for all of them
  // (a window over the period's pages), then per key one probe for its page and a walk
  // within it. 100 keys on a 1,000,000-row period: 8 ms instead of 20 ms summing per key.
  add("bk_cold_count_better_many",
      "WITH p AS MATERIALIZED (SELECT encoded, member, sum(rows) OVER (ORDER BY encoded,"
      " member) - rows AS before FROM " +
          pages + " WHERE" + period +
          "), y AS (SELECT x.e, x.i, f.encoded AS fe, f.member AS fm FROM unnest($4::bigint[])"
          " WITH ORDINALITY AS x(e, i) LEFT JOIN LATERAL (SELECT encoded, member FROM " +
          pages + " WHERE" + period +
          "AND (encoded, member) <= (x.e, '' COLLATE \"C\") ORDER BY encoded DESC, member"
          " DESC LIMIT 1) f ON true) SELECT coalesce(p.before + (SELECT count(*) FROM " +
          table +
          " c WHERE (c.encoded, c.member) >= (y.fe, y.fm) AND (c.encoded, c.member) <"
          " (y.e, '' COLLATE \"C\") AND c.encoded >= y.fe AND c.encoded <= y.e" +
          in_period +
          "), 0)::bigint FROM y LEFT JOIN p ON p.encoded = y.fe AND p.member = y.fm"
          " ORDER BY y.i");
  return t;
}

// Listing pages: from a position (through the page counts), or by key.
StatementTable listing_statements(const std::string& q) {
  const std::string table = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string& period = kInPeriod;
  const std::string hit_columns(kHitColumns);
  StatementTable t;
  const auto add = [&t](std::string name, std::string sql) {
    t.push_back({std::move(name), std::move(sql)});
  };
  // The page holding position $4 (0-based) and how many rows come before it.
  const std::string page_at =
      "(SELECT encoded, member, upto - rows AS skip FROM (SELECT encoded, member, rows,"
      " sum(rows) OVER (ORDER BY encoded, member) AS upto FROM " +
      pages + " WHERE" + period + ") p WHERE upto > $4 ORDER BY encoded, member LIMIT 1) f";
  add("bk_cold_slice", "SELECT x.* FROM " + page_at + " CROSS JOIN LATERAL (SELECT " + hit_columns +
                           " FROM " + table + " WHERE" + period +
                           "AND (encoded, member) >= (f.encoded, f.member)"
                           " ORDER BY encoded, member OFFSET $4 - f.skip LIMIT $5) x");
  // The listing key at a position: the only columns read, so the index alone may answer.
  add("bk_cold_key_at", "SELECT x.* FROM " + page_at +
                            " CROSS JOIN LATERAL (SELECT encoded, member FROM " + table + " WHERE" +
                            period +
                            "AND (encoded, member) >= (f.encoded, f.member)"
                            " ORDER BY encoded, member OFFSET $4 - f.skip LIMIT 1) x");
  add("bk_cold_from", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                          "AND (encoded, member) >= ($4, $5 COLLATE \"C\")"
                          " ORDER BY encoded, member LIMIT $6");
  add("bk_cold_after", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                           "AND (encoded, member) > ($4, $5 COLLATE \"C\")"
                           " ORDER BY encoded, member LIMIT $6");
  add("bk_cold_before", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                            "AND (encoded, member) < ($4, $5 COLLATE \"C\")"
                            " ORDER BY encoded DESC, member DESC LIMIT $6");
  add("bk_cold_rows_for", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                              "AND member = ANY($4::text[]) ORDER BY encoded, member");
  return t;
}

}  // namespace

StatementTable reader_statements(const std::string& q) {
  StatementTable t = count_statements(q);
  for (Statement& s : listing_statements(q)) t.push_back(std::move(s));
  return t;
}

struct ColdReader::Impl {
  std::shared_ptr<Link> link;
  std::shared_ptr<pg::Session> session;  // declared before txn: the transaction ends first
  std::unique_ptr<ReadTxn> txn;

  // The transaction's ROLLBACK waits for the server like any call: within the thread's
  // deadline (a server that froze after the last read must not hold the reader's thread).
  ~Impl() {
    if (!txn || !session || !session->conn) return;
    const pg::WatchedCall watch(session->conn->sock(), link->where, &session->broken);
    txn.reset();
  }
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

ColdReader ColdReader::open(std::shared_ptr<Link> link) {
  Link& l = *link;
  auto impl = std::make_unique<Impl>();
  impl->link = std::move(link);
  l.use();
  impl->session = l.session;
  guarded(l, impl->session.get(), "starting a cold read", [&] {
    impl->txn = std::make_unique<ReadTxn>(*impl->session->conn);
    // REPEATABLE READ takes its snapshot at the first statement: take it now.
    impl->txn->exec("SELECT 1");
  });
  return ColdReader(std::move(impl));
}

ColdReader::ColdReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ColdReader::~ColdReader() = default;
ColdReader::ColdReader(ColdReader&&) noexcept = default;

namespace {

template <class ReaderImpl>
ReadTxn& open_txn(const std::unique_ptr<ReaderImpl>& impl) {
  if (!impl || !impl->txn) throw Error("cold reader: used after it was moved from");
  return *impl->txn;
}

}  // namespace

std::int64_t ColdReader::count(const PeriodKey& period) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  return guarded(*impl_->link, impl_->session.get(), "counting cold members", [&] {
    return t
        .exec_params1(count_sql(impl_->link->q), period.board, period.period, period.period_id)[0]
        .as<std::int64_t>();
  });
}

std::int64_t ColdReader::count_better(const PeriodKey& period, std::int64_t encoded) {
  // No member id sorts before the empty one: the rows listed before (e, "") are those with
  // encoded < e.
  return count_before(period, encoded, std::string());
}

std::vector<std::int64_t> ColdReader::count_better(const PeriodKey& period,
                                                   const std::vector<std::int64_t>& encoded) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  if (encoded.empty()) return {};
  ArrayLiteral list;
  for (const std::int64_t e : encoded) list.integer(e);
  return guarded(*impl_->link, impl_->session.get(), "counting cold members", [&] {
    std::vector<std::int64_t> out;
    out.reserve(encoded.size());
    for (const auto& row : t.exec_prepared("bk_cold_count_better_many", period.board, period.period,
                                           period.period_id, list.done())) {
      out.push_back(row[0].as<std::int64_t>());
    }
    return out;
  });
}

std::int64_t ColdReader::count_before(const PeriodKey& period, std::int64_t encoded,
                                      const std::string& member) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  check_text("member", member);
  return guarded(*impl_->link, impl_->session.get(), "counting cold members", [&] {
    // No row when the period has no pages: then it has no cold rows either.
    const pqxx::result r = t.exec_prepared("bk_cold_count_before", period.board, period.period,
                                           period.period_id, encoded, member);
    return r.empty() ? std::int64_t{0} : r[0][0].as<std::int64_t>();
  });
}

std::vector<ColdHit> ColdReader::slice(const PeriodKey& period, std::int64_t offset,
                                       std::int64_t limit) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  if (limit <= 0) return {};
  offset = std::max<std::int64_t>(offset, 0);
  return guarded(*impl_->link, impl_->session.get(), "listing cold members", [&] {
    return hits_from(t.exec_prepared("bk_cold_slice", period.board, period.period, period.period_id,
                                     offset, limit));
  });
}

std::optional<std::pair<std::int64_t, std::string>> ColdReader::key_at(const PeriodKey& period,
                                                                       std::int64_t position) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  return guarded(*impl_->link, impl_->session.get(), "locating a cold position", [&] {
    const pqxx::result r =
        t.exec_prepared("bk_cold_key_at", period.board, period.period, period.period_id, position);
    if (r.empty()) return std::optional<std::pair<std::int64_t, std::string>>();
    return std::optional<std::pair<std::int64_t, std::string>>(
        std::make_pair(r[0][0].as<std::int64_t>(), r[0][1].as<std::string>()));
  });
}

std::vector<ColdHit> ColdReader::from(const PeriodKey& period, std::int64_t encoded,
                                      const std::string& member, std::int64_t limit) {
  return listing("bk_cold_from", period, encoded, member, limit);
}

std::vector<ColdHit> ColdReader::after(const PeriodKey& period, std::int64_t encoded,
                                       const std::string& member, std::int64_t limit) {
  return listing("bk_cold_after", period, encoded, member, limit);
}

std::vector<ColdHit> ColdReader::listing(const char* statement, const PeriodKey& period,
                                         std::int64_t encoded, const std::string& member,
                                         std::int64_t limit) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  check_text("member", member);
  if (limit <= 0) return {};
  return guarded(*impl_->link, impl_->session.get(), "listing cold members", [&] {
    return hits_from(t.exec_prepared(statement, period.board, period.period, period.period_id,
                                     encoded, member, limit));
  });
}

std::vector<ColdHit> ColdReader::before(const PeriodKey& period, std::int64_t encoded,
                                        const std::string& member, std::int64_t limit) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  check_text("member", member);
  if (limit <= 0) return {};
  return guarded(*impl_->link, impl_->session.get(), "listing cold members", [&] {
    return hits_from(t.exec_prepared("bk_cold_before", period.board, period.period,
                                     period.period_id, encoded, member, limit));
  });
}

std::vector<ColdHit> ColdReader::rows_for(const PeriodKey& period,
                                          const std::vector<std::string>& members) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  if (members.empty()) return {};
  ArrayLiteral list;
  for (const std::string& m : members) {
    check_text("member", m);
    list.text(m);
  }
  return guarded(*impl_->link, impl_->session.get(), "reading cold members", [&] {
    return hits_from(t.exec_prepared("bk_cold_rows_for", period.board, period.period,
                                     period.period_id, list.done()));
  });
}

}  // namespace bk::cold
