// libpqxx 6.4 behind cold_store.h: every statement is prepared once per connection, rows
// travel as PostgreSQL array literals (one statement per chunk, one round trip per lookup),
// and every libpqxx exception becomes a bk::Error that never shows the password.
#include "cold/cold_store.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <iterator>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>

#include "cold/pg.h"

#include "core/error.h"
#include "core/profile.h"
#include "embedded/cold_migrations.h"

namespace bk::cold {
namespace {

// Rows per INSERT statement inside one upsert transaction (bounds the parameter size).
constexpr std::size_t kRowsPerStatement = 5000;

using ReadTxn = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

using pg::ArrayLiteral;
using pg::guarded;
using pg::Link;
using pg::quote_identifier;
using pg::replace_all;
using pg::Session;

// ---- SQL text ----------------------------------------------------------------------------

// A fixed advisory lock key per schema (FNV-1a), the same in every process.
std::int64_t migration_lock_key(const std::string& schema) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : "boardkeeper.migrate." + schema) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::int64_t>(h);
}

void check_text(std::string_view what, const std::string& s) {
  if (s.find('\0') != std::string::npos) {
    throw RefusedError("the cold tier cannot store a " + std::string(what) +
                       " that contains a NUL byte");
  }
}

// Bytes as lower-case hex and back (keys travel as text: no binary parameters in libpqxx 6).
std::string to_hex(std::string_view bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string from_hex(std::string_view hex) {
  const auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
  }
  return out;
}

void check_period(const PeriodKey& p) {
  check_text("board", p.board);
  check_text("period", p.period);
  check_text("period id", p.period_id);
}

// Columns every read returns, in this order (see hit_from).
constexpr std::string_view kHitColumns =
    "member, encoded, points, "
    "round(extract(epoch FROM achieved_at) * 1000)::bigint AS achieved_ms, version";

ColdHit hit_from(const pqxx::row& r, pqxx::row::size_type first) {
  ColdHit h;
  h.member = r[first].as<std::string>();
  h.encoded = r[first + 1].as<std::int64_t>();
  h.points = r[first + 2].as<std::int64_t>();
  if (!r[first + 3].is_null()) h.achieved_at = from_epoch_ms(r[first + 3].as<std::int64_t>());
  h.version = r[first + 4].as<std::int64_t>();
  return h;
}

std::vector<ColdHit> hits_from(const pqxx::result& res) {
  std::vector<ColdHit> out;
  out.reserve(res.size());
  for (const auto& r : res) out.push_back(hit_from(r, 0));
  return out;
}

void prepare_statements(pqxx::connection& c, const std::string& q) {
  const std::string table = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string hit_columns(kHitColumns);
  const std::string period = " board = $1 AND period = $2 AND period_id = $3 ";
  // A fresh version, and the period's pages for this transaction: spills of one period take
  // turns on them ($1: the lock's name).
  c.prepare("bk_cold_next_version", "SELECT nextval(" + c.quote(q + ".cold_version") +
                                        "), pg_advisory_xact_lock(hashtextextended($1, 0))");
  c.prepare("bk_cold_upsert",
            "INSERT INTO " + table +
                " AS c (board, period, period_id, member, encoded, points, achieved_at, version)"
                " SELECT $1, $2, $3, u.member, u.encoded, u.points,"
                " to_timestamp(u.achieved_ms / 1000.0), $8"
                " FROM unnest($4::text[], $5::bigint[], $6::bigint[], $7::bigint[])"
                " AS u(member, encoded, points, achieved_ms)"
                " ON CONFLICT (board, period, period_id, member) DO UPDATE SET"
                " encoded = EXCLUDED.encoded, points = EXCLUDED.points,"
                " achieved_at = EXCLUDED.achieved_at, version = EXCLUDED.version,"
                " spilled_at = now()");
  c.prepare("bk_cold_lookup",
            "SELECT k.i, c.member, c.encoded, c.points,"
            " round(extract(epoch FROM c.achieved_at) * 1000)::bigint, c.version"
            " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY"
            " AS k(board, period, period_id, member, i)"
            " JOIN " +
                table +
                " c ON c.board = k.board AND c.period = k.period"
                " AND c.period_id = k.period_id AND c.member = k.member");
  c.prepare("bk_cold_drop_period", "WITH p AS (DELETE FROM " + pages + " WHERE" + period +
                                       ") DELETE FROM " + table + " WHERE" + period);
  // The counted pages (sql/007_cold_pages.sql), kept by upsert_once.
  c.prepare("bk_cold_page_floor",
            "INSERT INTO " + pages +
                " (board, period, period_id, encoded, member, rows)"
                " VALUES ($1, $2, $3, -9223372036854775808, '', 0) ON CONFLICT DO NOTHING");
  // The pages from the one before the page holding ($4, $5) on (all of them: the smallest
  // key), for a spill whose rows all come at or after ($4, $5).
  c.prepare("bk_cold_pages_from",
            "WITH f AS (SELECT encoded, member FROM " + pages + " WHERE" + period +
                "AND (encoded, member) <= ($4, $5 COLLATE \"C\") ORDER BY encoded DESC, member"
                " DESC OFFSET 1 LIMIT 1) SELECT encoded, member, rows FROM " +
                pages + " WHERE" + period +
                "AND (NOT EXISTS (SELECT 1 FROM f) OR (encoded, member) >= (SELECT encoded,"
                " member FROM f)) ORDER BY encoded, member");
  c.prepare("bk_cold_old_keys", "SELECT encoded, member FROM " + table + " WHERE" + period +
                                    "AND member = ANY($4::text[])");
  // The last listing key of one page's rows (bounds as below).
  c.prepare("bk_cold_page_last",
            "SELECT encoded, member FROM " + table + " WHERE" + period +
                "AND (encoded, member) >= ($4, $5 COLLATE \"C\") AND ($6 OR (encoded, member) <"
                " ($7, $8 COLLATE \"C\")) ORDER BY encoded DESC, member DESC LIMIT 1");
  // Every $9-th listing key of one page's rows (from the page's key, up to the next page's
  // unless $6, the last page), with its 0-based place in the page.
  c.prepare("bk_cold_page_cuts",
            "SELECT encoded, member, i FROM (SELECT encoded, member, row_number() OVER"
            " (ORDER BY encoded, member) - 1 AS i FROM " +
                table + " WHERE" + period +
                "AND (encoded, member) >= ($4, $5 COLLATE \"C\") AND ($6 OR (encoded, member) <"
                " ($7, $8 COLLATE \"C\"))) x WHERE i > 0 AND i % $9 = 0 ORDER BY i");
  const std::string page_rows =
      " FROM unnest($4::bigint[], $5::text[], $6::bigint[])"
      " AS u(encoded, member, rows)";
  c.prepare("bk_cold_pages_set", "UPDATE " + pages + " p SET rows = u.rows" + page_rows +
                                     " WHERE p.board = $1 AND p.period = $2 AND p.period_id = $3"
                                     " AND p.encoded = u.encoded AND p.member = u.member");
  c.prepare("bk_cold_pages_add", "INSERT INTO " + pages +
                                     " (board, period, period_id, encoded, member, rows)"
                                     " SELECT $1, $2, $3, u.encoded, u.member, u.rows" +
                                     page_rows);
  c.prepare("bk_cold_pages_drop",
            "DELETE FROM " + pages +
                " p USING unnest($4::bigint[], $5::text[]) AS u(encoded, member)"
                " WHERE p.board = $1 AND p.period = $2 AND p.period_id = $3"
                " AND p.encoded = u.encoded AND p.member = u.member");
  // Reads: the page counts before a key, then a walk within one page.
  c.prepare("bk_cold_count",
            "SELECT coalesce(sum(rows), 0)::bigint FROM " + pages + " WHERE" + period);
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
  c.prepare("bk_cold_count_before", count_before("$4", "$5"));
  // The same for many keys (E, ''): the rows before each page summed once for all of them
  // (a window over the period's pages), then per key one probe for its page and a walk
  // within it. 100 keys on a 1,000,000-row period: 8 ms instead of 20 ms summing per key.
  c.prepare(
      "bk_cold_count_better_many",
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
  // The page holding position $4 (0-based) and how many rows come before it.
  const std::string page_at =
      "(SELECT encoded, member, upto - rows AS skip FROM (SELECT encoded, member, rows,"
      " sum(rows) OVER (ORDER BY encoded, member) AS upto FROM " +
      pages + " WHERE" + period + ") p WHERE upto > $4 ORDER BY encoded, member LIMIT 1) f";
  c.prepare("bk_cold_slice", "SELECT x.* FROM " + page_at + " CROSS JOIN LATERAL (SELECT " +
                                 hit_columns + " FROM " + table + " WHERE" + period +
                                 "AND (encoded, member) >= (f.encoded, f.member)"
                                 " ORDER BY encoded, member OFFSET $4 - f.skip LIMIT $5) x");
  // The listing key at a position: the only columns read, so the index alone may answer.
  c.prepare("bk_cold_key_at", "SELECT x.* FROM " + page_at +
                                  " CROSS JOIN LATERAL (SELECT encoded, member FROM " + table +
                                  " WHERE" + period +
                                  "AND (encoded, member) >= (f.encoded, f.member)"
                                  " ORDER BY encoded, member OFFSET $4 - f.skip LIMIT 1) x");
  c.prepare("bk_cold_from", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                "AND (encoded, member) >= ($4, $5 COLLATE \"C\")"
                                " ORDER BY encoded, member LIMIT $6");
  c.prepare("bk_cold_after", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                 "AND (encoded, member) > ($4, $5 COLLATE \"C\")"
                                 " ORDER BY encoded, member LIMIT $6");
  c.prepare("bk_cold_before", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                  "AND (encoded, member) < ($4, $5 COLLATE \"C\")"
                                  " ORDER BY encoded DESC, member DESC LIMIT $6");
  // Profiles: one field of many members, the other kept.
  const auto upsert_profile = [&](const std::string& column, const std::string& value) {
    return "INSERT INTO " + q + ".profiles AS p (board, member, " + column +
           ") SELECT $1, u.member, " + value +
           " FROM unnest($2::text[], $3::text[]) AS u(member, v)"
           " ON CONFLICT (board, member) DO UPDATE SET " +
           column + " = EXCLUDED." + column + ", updated_at = now()";
  };
  c.prepare("bk_cold_profile_names", upsert_profile("name", "u.v"));
  c.prepare("bk_cold_profile_metadata", upsert_profile("metadata", "u.v::jsonb"));
  c.prepare("bk_cold_profiles", "SELECT member, name, metadata::text FROM " + q +
                                    ".profiles WHERE board = $1 AND member = ANY($2::text[])");
  // Each through its partial index (sql/009_profile_fields.sql).
  for (const char* column : {"name", "metadata"}) {
    c.prepare(std::string("bk_cold_has_") + column, "SELECT EXISTS (SELECT 1 FROM " + q +
                                                        ".profiles WHERE board = $1 AND " + column +
                                                        " IS NOT NULL)");
  }
  c.prepare("bk_cold_rows_for", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                    "AND member = ANY($4::text[]) ORDER BY encoded, member");
}

}  // namespace

// ---- ColdStore ---------------------------------------------------------------------------

struct ColdStore::Impl {
  std::shared_ptr<Link> link;
};

struct ColdReader::Impl {
  std::shared_ptr<Link> link;
  std::shared_ptr<Session> session;  // declared before txn: the transaction ends first
  std::unique_ptr<ReadTxn> txn;
};

namespace {

// Templates, as free functions may not name the private Impl types.
template <class StoreImpl>
Link& live(const std::unique_ptr<StoreImpl>& impl) {
  if (!impl) throw Error("cold store: used after it was moved from");
  return *impl->link;
}

}  // namespace

ColdStore::ColdStore(const std::string& url, std::string schema) : impl_(std::make_unique<Impl>()) {
  const std::string q = quote_identifier(schema);
  impl_->link =
      pg::connect(url, std::move(schema), [q](pqxx::connection& c) { prepare_statements(c, q); });
}

ColdStore::~ColdStore() = default;
ColdStore::ColdStore(ColdStore&&) noexcept = default;
ColdStore& ColdStore::operator=(ColdStore&&) noexcept = default;

int ColdStore::migrate() {
  Link& l = live(impl_);
  Session& session = l.use();
  const std::int64_t lock_key = migration_lock_key(l.schema);
  int applied = 0;
  for (;;) {
    const bool more = guarded(l, &session, "migrating schema " + l.schema, [&] {
      pqxx::work w(*session.conn);
      // A migration may rightly wait long for its locks (behind another migrate, or a
      // running archive): no lock_timeout here (see pg::Link::use).
      w.exec0("SET LOCAL lock_timeout = 0");
      // Serialises concurrent migrate() calls for this schema, before anything is created.
      w.exec_params("SELECT pg_advisory_xact_lock($1)", lock_key);
      w.exec0("CREATE SCHEMA IF NOT EXISTS " + l.q);
      w.exec0("CREATE TABLE IF NOT EXISTS " + l.q +
              ".schema_migrations (version int PRIMARY KEY, name text NOT NULL,"
              " applied_at timestamptz NOT NULL DEFAULT now())");
      std::vector<int> done;
      for (const auto& r : w.exec("SELECT version FROM " + l.q + ".schema_migrations")) {
        done.push_back(r[0].as<int>());
      }
      for (const embedded::Migration& m : embedded::kMigrations) {
        if (std::find(done.begin(), done.end(), m.version) != done.end()) continue;
        w.exec(replace_all(std::string(m.text), "{{schema}}", l.q), std::string(m.name));
        w.exec_params0("INSERT INTO " + l.q + ".schema_migrations (version, name) VALUES ($1, $2)",
                       m.version, std::string(m.name));
        w.commit();
        return true;
      }
      w.commit();
      return false;
    });
    if (!more) break;
    ++applied;
  }
  return applied;
}

int ColdStore::schema_version() {
  Link& l = live(impl_);
  Session& session = l.use();
  return guarded(l, &session, "reading the schema version", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::row r =
        n.exec_params1("SELECT to_regclass($1) IS NOT NULL", l.q + ".schema_migrations");
    if (!r[0].as<bool>()) return 0;
    return n.exec1("SELECT coalesce(max(version), 0) FROM " + l.q + ".schema_migrations")[0]
        .as<int>();
  });
}

std::optional<Deployment> ColdStore::deployment() {
  Link& l = live(impl_);
  Session& session = l.use();
  return guarded(
      l, &session, "reading the schema's deployment", [&]() -> std::optional<Deployment> {
        pqxx::nontransaction n(*session.conn);
        pqxx::result r;
        try {
          r = n.exec("SELECT id, key_prefix, redis_address FROM " + l.q + ".deployment");
        } catch (const pqxx::sql_error& e) {
          if (e.sqlstate() != "42P01" && e.sqlstate() != "3F000") throw;  // no table, no schema
          throw UsageError("schema " + l.schema + " (" + l.where +
                           ") is not migrated to this version of boardkeeper: run `boardkeeper "
                           "migrate` first");
        }
        if (r.empty()) return std::nullopt;
        return Deployment{r[0][0].as<std::string>(), r[0][1].as<std::string>(),
                          r[0][2].as<std::string>()};
      });
}

Deployment ColdStore::claim_deployment(const Deployment& me) {
  Link& l = live(impl_);
  check_text("deployment", me.id + me.key_prefix + me.redis_address);
  Session& session = l.use();
  guarded(l, &session, "claiming the schema", [&] {
    // Two statements, each with its own snapshot: the SELECT sees the row of a claimer
    // that committed while the INSERT waited for it.
    pqxx::nontransaction n(*session.conn);
    n.exec_params("INSERT INTO " + l.q +
                      ".deployment (id, key_prefix, redis_address) VALUES ($1, $2, $3)"
                      " ON CONFLICT (one_row) DO NOTHING",
                  me.id, me.key_prefix, me.redis_address);
    return 0;
  });
  const auto owner = deployment();
  if (!owner) throw PostgresError(l.where + ": the claim of schema " + l.schema + " vanished");
  return *owner;
}

bool ColdStore::update_deployment(const std::string& owner_id, const Deployment& me) {
  Link& l = live(impl_);
  check_text("deployment", me.id + me.key_prefix + me.redis_address);
  Session& session = l.use();
  return guarded(l, &session, "updating the schema's deployment", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result r = n.exec_params(
        "UPDATE " + l.q +
            ".deployment SET id = $2, key_prefix = $3, redis_address = $4 WHERE id IN ($1, $2)",
        owner_id, me.id, me.key_prefix, me.redis_address);
    return r.affected_rows() == 1;
  });
}

std::string ColdStore::shared_key(const std::string& name, const std::string& candidate) {
  Link& l = live(impl_);
  Session& session = l.use();
  return guarded(l, &session, "reading the deployment's " + name + " key", [&] {
    // Two statements, each with its own snapshot: the SELECT sees the key of a process that
    // committed while the INSERT waited for it. Hex on the wire: no binary parameters.
    pqxx::nontransaction n(*session.conn);
    try {
      n.exec_params("INSERT INTO " + l.q +
                        ".serve_keys (name, key) VALUES ($1, decode($2, 'hex'))"
                        " ON CONFLICT (name) DO NOTHING",
                    name, to_hex(candidate));
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != "42P01" && e.sqlstate() != "3F000") throw;  // no table, no schema
      throw UsageError("schema " + l.schema + " (" + l.where +
                       ") is not migrated to this version of boardkeeper: run `boardkeeper "
                       "migrate` first");
    }
    const pqxx::row r = n.exec_params1(
        "SELECT encode(key, 'hex') FROM " + l.q + ".serve_keys WHERE name = $1", name);
    return from_hex(r[0].as<std::string>());
  });
}

namespace {

// The counted pages of one period (sql/007_cold_pages.sql). A page grown past kPageMaxRows
// is cut into pages of kPageRows; a page left empty is dropped (its range joins the page
// before it), except the first, which starts at the smallest key.
constexpr std::int64_t kPageRows = 500;
constexpr std::int64_t kPageMaxRows = 2 * kPageRows;

using ListingKey = std::pair<std::int64_t, std::string>;  // (encoded, member): bytewise

struct Page {
  ListingKey key;
  std::int64_t rows = 0;          // as read at the start of the transaction
  std::int64_t removed = 0;       // rows that left it in this transaction (replaced)
  std::vector<ListingKey> added;  // rows written into it in this transaction
  // Of a page about to grow too big: its last key before this transaction.
  std::optional<ListingKey> last_before;
};

// A period's pages in one spill transaction, kept exact: made before the rows are written
// (reads the pages, under the lock taken with the version; places each row about to be written),
// told of every row replaced, and written after the rows.
class PageBook {
 public:
  // `replacing`: the rows may replace older ones (see replaced()).
  PageBook(pqxx::work& w, const PeriodKey& period, const std::vector<const ColdRow*>& written,
           bool replacing)
      : w_(w), period_(period) {
    // Rows replaced may have been anywhere: then every page is read; else those from the
    // page before the first row's on (only these can change).
    ListingKey from{std::numeric_limits<std::int64_t>::min(), std::string()};
    if (!replacing && !written.empty()) {
      const auto first =
          std::min_element(written.begin(), written.end(), [](const ColdRow* a, const ColdRow* b) {
            return std::tie(a->encoded, a->member) < std::tie(b->encoded, b->member);
          });
      from = {(*first)->encoded, (*first)->member};
    }
    for (const auto& r : w.exec_prepared("bk_cold_pages_from", period.board, period.period,
                                         period.period_id, from.first, from.second)) {
      pages_.push_back({{r[0].as<std::int64_t>(), r[1].as<std::string>()},
                        r[2].as<std::int64_t>(),
                        0,
                        {},
                        std::nullopt});
    }
    if (pages_.empty()) {  // the period's first page
      w.exec_prepared("bk_cold_page_floor", period.board, period.period, period.period_id);
      pages_.push_back(
          {{std::numeric_limits<std::int64_t>::min(), std::string()}, 0, 0, {}, std::nullopt});
    }
    for (const ColdRow* r : written) {
      page_of({r->encoded, r->member}).added.emplace_back(r->encoded, r->member);
    }
    // A page about to be cut: if all its new rows come after its old ones (a spill's
    // chunks arrive in listing order), the cuts are found here, not by the database.
    for (std::size_t i = 0; i < pages_.size(); ++i) {
      Page& p = pages_[i];
      if (p.rows == 0 || p.rows + static_cast<std::int64_t>(p.added.size()) <= kPageMaxRows) {
        continue;
      }
      const bool last = i + 1 == pages_.size();
      const ListingKey& next = last ? p.key : pages_[i + 1].key;
      const pqxx::result r =
          w.exec_prepared("bk_cold_page_last", period.board, period.period, period.period_id,
                          p.key.first, p.key.second, last, next.first, next.second);
      if (!r.empty()) p.last_before.emplace(r[0][0].as<std::int64_t>(), r[0][1].as<std::string>());
    }
  }

  // A row this transaction replaced, by its listing key before.
  void replaced(const ListingKey& old) { ++page_of(old).removed; }

  // After the rows are written: counts, cuts, empty pages dropped.
  void write() {
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

 private:
  struct Keys {  // page keys (and counts) as array literals
    ArrayLiteral e, m, n;
    bool any = false;
    void put(const ListingKey& k, std::optional<std::int64_t> rows) {
      e.integer(k.first);
      m.text(k.second);
      if (rows) n.integer(*rows);
      any = true;
    }
  };

  Page& page_of(const ListingKey& k) {
    // The pages read start at or before every key looked up (the first page of a period
    // starts at the smallest key there is).
    auto it = std::upper_bound(pages_.begin(), pages_.end(), k,
                               [](const ListingKey& key, const Page& p) { return key < p.key; });
    return *std::prev(it);
  }

  void update(std::size_t i) {
    Page& p = pages_[i];
    if (p.removed == 0 && p.added.empty()) return;
    const std::int64_t kept = p.rows - p.removed;  // rows from before this transaction
    const auto added = static_cast<std::int64_t>(p.added.size());
    const std::int64_t now = kept + added;
    if (now == 0 && p.key != ListingKey{std::numeric_limits<std::int64_t>::min(), ""}) {
      drop_.put(p.key, std::nullopt);
      return;
    }
    if (now <= kPageMaxRows) {
      set_.put(p.key, now);
      return;
    }
    std::sort(p.added.begin(), p.added.end());
    if (kept == 0 || (p.last_before && *p.last_before < p.added.front())) {
      // The old rows first, then ours: cut at every kPageRows-th row.
      const std::int64_t first = std::max<std::int64_t>(0, kPageRows - kept);
      set_.put(p.key, kept + first);
      for (std::int64_t at = first; at < added; at += kPageRows) {
        add_.put(p.added[static_cast<std::size_t>(at)], std::min(kPageRows, added - at));
      }
      return;
    }
    // Mixed with older rows: the database finds the cuts in listing order.
    const bool last = i + 1 == pages_.size();
    const ListingKey& next = last ? p.key : pages_[i + 1].key;
    const pqxx::result cuts =
        w_.exec_prepared("bk_cold_page_cuts", period_.board, period_.period, period_.period_id,
                         p.key.first, p.key.second, last, next.first, next.second, kPageRows);
    std::int64_t from = 0;
    std::optional<ListingKey> key;  // of the page being counted; none: p's own
    auto close = [&](std::int64_t to) {
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

  pqxx::work& w_;
  const PeriodKey& period_;
  std::vector<Page> pages_;
  Keys set_, add_, drop_;
};

// One spill: a fresh version, one commit. Rows known to be absent go in by COPY; the rest
// in INSERT ... ON CONFLICT statements of kRowsPerStatement rows. The period's pages are
// locked first (two spills of one period take turns) and updated before the commit.
std::int64_t upsert_once(Session& session, const std::string& table, const std::string& pages_lock,
                         const PeriodKey& period, const std::vector<const ColdRow*>& fresh,
                         const std::vector<const ColdRow*>& rows) {
  pqxx::work w(*session.conn);
  const std::int64_t version =
      w.exec_prepared1("bk_cold_next_version", pages_lock)[0].as<std::int64_t>();
  std::vector<const ColdRow*> written(fresh);
  written.insert(written.end(), rows.begin(), rows.end());
  PageBook pages(w, period, written, !rows.empty());
  if (!fresh.empty()) {
    pqxx::stream_to copy(w, table,
                         std::vector<std::string>{"board", "period", "period_id", "member",
                                                  "encoded", "points", "achieved_at", "version"});
    for (const ColdRow* r : fresh) {
      if (r->achieved_at) {
        copy << std::make_tuple(period.board, period.period, period.period_id, r->member,
                                r->encoded, r->points, format_rfc3339(*r->achieved_at), version);
      } else {
        copy << std::make_tuple(period.board, period.period, period.period_id, r->member,
                                r->encoded, r->points, nullptr, version);
      }
    }
    copy.complete();
  }
  for (std::size_t start = 0; start < rows.size(); start += kRowsPerStatement) {
    const std::size_t end = std::min(rows.size(), start + kRowsPerStatement);
    ArrayLiteral members, encoded, points, achieved;
    for (std::size_t i = start; i < end; ++i) {
      const ColdRow& r = *rows[i];
      members.text(r.member);
      encoded.integer(r.encoded);
      points.integer(r.points);
      if (r.achieved_at) {
        achieved.integer(to_epoch_ms(*r.achieved_at));
      } else {
        achieved.null();
      }
    }
    const std::string member_list = members.done();
    for (const auto& k : w.exec_prepared("bk_cold_old_keys", period.board, period.period,
                                         period.period_id, member_list)) {
      pages.replaced({k[0].as<std::int64_t>(), k[1].as<std::string>()});
    }
    w.exec_prepared("bk_cold_upsert", period.board, period.period, period.period_id, member_list,
                    encoded.done(), points.done(), achieved.done(), version);
  }
  pages.write();
  w.commit();
  return version;
}

}  // namespace

std::int64_t ColdStore::upsert(const PeriodKey& period, const std::vector<ColdRow>& rows,
                               const std::vector<bool>& known_absent) {
  Link& l = live(impl_);
  check_period(period);
  // Sorted by member (one lock order for concurrent spills of a period); for a member given
  // twice the last row wins, as one statement may not update a row twice.
  std::vector<std::size_t> order;
  order.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check_text("member", rows[i].member);
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].member < rows[b].member; });
  std::vector<const ColdRow*> fresh, upserted, all;
  all.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && rows[order[i + 1]].member == rows[order[i]].member) continue;
    const std::size_t k = order[i];
    all.push_back(&rows[k]);
    const bool absent = k < known_absent.size() && known_absent[k];
    (absent ? fresh : upserted).push_back(&rows[k]);
  }
  Session& session = l.use();
  const std::string table = l.q + ".cold_members";
  const std::string pages_lock =
      "bk-pages/" + l.schema + "/" + period.board + "/" + period.period + "/" + period.period_id;
  return guarded(l, &session, "spilling to the cold tier", [&] {
    // A deadlock or serialization failure aborts the transaction with nothing committed,
    // so it is run again, a few times. A row that was promised absent but exists (the
    // stale set lost an entry, e.g. a Redis failover) aborts it too: then every row is
    // upserted.
    bool careful = fresh.empty();
    for (int attempt = 1;; ++attempt) {
      try {
        return careful ? upsert_once(session, table, pages_lock, period, {}, all)
                       : upsert_once(session, table, pages_lock, period, fresh, upserted);
      } catch (const pqxx::unique_violation&) {
        if (careful) throw;
        careful = true;
      } catch (const pqxx::deadlock_detected&) {
        if (attempt == 3) throw;
      } catch (const pqxx::serialization_failure&) {
        if (attempt == 3) throw;
      }
    }
  });
}

void ColdStore::analyze() {
  Link& l = live(impl_);
  Session& session = l.use();
  guarded(l, &session, "analyzing the cold tier", [&] {
    // Waits for a VACUUM or ANALYZE that holds the table (autovacuum), however long: no
    // lock_timeout here (see pg::Link::use).
    pqxx::work w(*session.conn);
    w.exec0("SET LOCAL lock_timeout = 0");
    w.exec0("ANALYZE " + l.q + ".cold_members");
    w.commit();
    return 0;
  });
}

std::vector<std::optional<ColdHit>> ColdStore::lookup(const std::vector<MemberKey>& keys) {
  Link& l = live(impl_);
  std::vector<std::optional<ColdHit>> out(keys.size());
  if (keys.empty()) return out;
  ArrayLiteral boards, periods, period_ids, members;
  for (const MemberKey& k : keys) {
    check_period(k.period);
    check_text("member", k.member);
    boards.text(k.period.board);
    periods.text(k.period.period);
    period_ids.text(k.period.period_id);
    members.text(k.member);
  }
  Session& session = l.use();
  guarded(l, &session, "reading cold members", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result res = n.exec_prepared("bk_cold_lookup", boards.done(), periods.done(),
                                             period_ids.done(), members.done());
    for (const auto& r : res) {
      const auto i = r[0].as<std::size_t>();
      if (i >= 1 && i <= out.size()) out[i - 1] = hit_from(r, 1);
    }
  });
  return out;
}

std::vector<PeriodKey> ColdStore::periods_with_rows(const std::optional<std::string>& board) {
  Link& l = live(impl_);
  if (board) check_text("board", *board);
  Session& session = l.use();
  return guarded(l, &session, "listing the periods of the cold tier", [&] {
    pqxx::nontransaction n(*session.conn);
    const std::string table = l.q + ".cold_members";
    // Before `migrate` there is no cold tier, so nothing in it either.
    if (n.exec_params1("SELECT to_regclass($1) IS NULL", table)[0].as<bool>()) {
      return std::vector<PeriodKey>{};
    }
    // A loose index scan: each step is one probe of the primary key for the next period.
    const std::string where = board ? " WHERE board = " + n.quote(*board) : std::string();
    const std::string and_board = board ? " AND c.board = " + n.quote(*board) : std::string();
    const pqxx::result res = n.exec(
        "WITH RECURSIVE p AS ((SELECT board, period, period_id FROM " + table + where +
        " ORDER BY board, period, period_id LIMIT 1) UNION ALL SELECT x.board, x.period,"
        " x.period_id FROM p, LATERAL (SELECT c.board, c.period, c.period_id FROM " +
        table + " c WHERE (c.board, c.period, c.period_id) > (p.board, p.period, p.period_id)" +
        and_board +
        " ORDER BY c.board, c.period, c.period_id LIMIT 1) x)"
        " SELECT board, period, period_id FROM p");
    std::vector<PeriodKey> out;
    out.reserve(res.size());
    for (const auto& r : res) {
      out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()});
    }
    return out;
  });
}

std::int64_t ColdStore::drop_period(const PeriodKey& period) {
  Link& l = live(impl_);
  check_period(period);
  Session& session = l.use();
  return guarded(l, &session, "dropping a period's cold rows", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result res =
        n.exec_prepared("bk_cold_drop_period", period.board, period.period, period.period_id);
    return static_cast<std::int64_t>(res.affected_rows());
  });
}

void ColdStore::upsert_profiles(const std::string& board, ProfileField field,
                                const std::vector<std::pair<std::string, std::string>>& values) {
  if (values.empty()) return;
  Link& l = live(impl_);
  check_text("board", board);
  pg::ArrayLiteral members, texts;
  for (const auto& [member, value] : values) {
    check_text("member id", member);
    check_text("profile", value);
    members.text(member);
    texts.text(value);
  }
  Session& session = l.use();
  guarded(l, &session, "writing profiles", [&] {
    pqxx::work w(*session.conn);
    w.exec_prepared(
        field == ProfileField::name ? "bk_cold_profile_names" : "bk_cold_profile_metadata", board,
        members.done(), texts.done());
    w.commit();
    return 0;
  });
}

std::vector<Profile> ColdStore::profiles(const std::string& board,
                                         const std::vector<std::string>& members) {
  if (members.empty()) return {};
  Link& l = live(impl_);
  check_text("board", board);
  pg::ArrayLiteral list;
  for (const std::string& member : members) {
    check_text("member id", member);
    list.text(member);
  }
  Session& session = l.use();
  return guarded(l, &session, "reading profiles", [&] {
    pqxx::nontransaction n(*session.conn);
    std::vector<Profile> out;
    for (const auto& r : n.exec_prepared("bk_cold_profiles", board, list.done())) {
      Profile p{r[0].as<std::string>(), std::nullopt, std::nullopt};
      if (!r[1].is_null()) p.name = r[1].as<std::string>();
      // jsonb's text reorders and spaces the object: the same text as Redis keeps instead.
      if (!r[2].is_null()) p.metadata = compact_metadata(r[2].as<std::string>());
      out.push_back(std::move(p));
    }
    return out;
  });
}

bool ColdStore::has_profiles(const std::string& board, ProfileField field) {
  Link& l = live(impl_);
  check_text("board", board);
  Session& session = l.use();
  return guarded(l, &session, "reading profiles", [&] {
    pqxx::nontransaction n(*session.conn);
    return n
        .exec_prepared1(field == ProfileField::name ? "bk_cold_has_name" : "bk_cold_has_metadata",
                        board)[0]
        .as<bool>();
  });
}

ColdReader ColdStore::reader() {
  Link& l = live(impl_);
  auto impl = std::make_unique<ColdReader::Impl>();
  impl->link = impl_->link;
  l.use();
  impl->session = l.session;
  guarded(l, impl->session.get(), "starting a cold read", [&] {
    impl->txn = std::make_unique<ReadTxn>(*impl->session->conn);
    // REPEATABLE READ takes its snapshot at the first statement: take it now.
    impl->txn->exec("SELECT 1");
  });
  return ColdReader(std::move(impl));
}

// ---- ColdReader --------------------------------------------------------------------------

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
    return t.exec_prepared1("bk_cold_count", period.board, period.period, period.period_id)[0]
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
