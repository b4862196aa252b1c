// libpqxx 6.4 behind cold_store.h: every statement is prepared once per connection, rows
// travel as PostgreSQL array literals (one statement per chunk, one round trip per lookup),
// and every libpqxx exception becomes a bk::Error that never shows the password.
#include "cold/cold_store.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <string_view>
#include <utility>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <pqxx/pqxx>
#pragma GCC diagnostic pop

#include "core/error.h"
#include "embedded/cold_migrations.h"

namespace bk::cold {
namespace {

// Connection parameters added unless the connection string sets them: a bounded connect,
// and UTF-8 on the wire whatever the server's or the environment's default.
constexpr std::string_view kDefaultParameters[][2] = {{"connect_timeout", "5"},
                                                      {"client_encoding", "UTF8"}};
// Rows per INSERT statement inside one upsert transaction (bounds the parameter size).
constexpr std::size_t kRowsPerStatement = 5000;

using ReadTxn = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

// ---- connection strings ------------------------------------------------------------------

bool is_url(std::string_view s) {
  return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0;
}

// Adds kDefaultParameters the connection string does not set (URL or key=value form).
std::string with_defaults(const std::string& conninfo) {
  std::string out = conninfo;
  for (const auto& [key, value] : kDefaultParameters) {
    if (conninfo.find(key) != std::string::npos) continue;
    if (is_url(out)) {
      if (out.find('?') == std::string::npos) {
        out += '?';
      } else if (out.back() != '?' && out.back() != '&') {
        out += '&';
      }
    } else if (!out.empty()) {
      out += ' ';
    }
    out += std::string(key) + "=" + std::string(value);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// Where a connection string points, for messages: never the password, which is kept apart
// so that it can be scrubbed from any message that might echo it.
struct Target {
  std::string host;
  std::string port;
  std::string dbname;
  std::vector<std::string> secrets;

  std::string describe() const {
    std::string out = "postgresql at " + (host.empty() ? std::string("(default host)") : host);
    if (!port.empty()) out += ":" + port;
    out += "/" + dbname;
    return out;
  }
};

void take_parameter(Target& t, std::string_view key, const std::string& value) {
  if (key == "host" || (key == "hostaddr" && t.host.empty())) t.host = value;
  if (key == "port") t.port = value;
  if (key == "dbname") t.dbname = value;
  if (key == "password" && !value.empty()) t.secrets.push_back(value);
}

Target parse_url(std::string_view url) {
  Target t;
  std::string_view rest = url.substr(url.find("://") + 3);
  const std::size_t query_at = rest.find('?');
  std::string_view query =
      query_at == std::string_view::npos ? std::string_view{} : rest.substr(query_at + 1);
  rest = rest.substr(0, query_at);
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) t.dbname = percent_decode(rest.substr(slash + 1));
  const std::size_t at = authority.rfind('@');
  std::string_view hostport = authority;
  if (at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    hostport = authority.substr(at + 1);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos && colon + 1 < userinfo.size()) {
      const std::string_view raw = userinfo.substr(colon + 1);
      t.secrets.emplace_back(raw);
      t.secrets.push_back(percent_decode(raw));
    }
  }
  // host:port, [v6]:port, or a comma-separated list of those: shown as written.
  const std::size_t colon = hostport.rfind(':');
  const std::size_t bracket = hostport.rfind(']');
  if (colon != std::string_view::npos && hostport.find(',') == std::string_view::npos &&
      (bracket == std::string_view::npos || colon > bracket)) {
    t.host = percent_decode(hostport.substr(0, colon));
    t.port = std::string(hostport.substr(colon + 1));
  } else {
    t.host = percent_decode(hostport);
  }
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (eq != std::string_view::npos) {
      const std::string_view raw = pair.substr(eq + 1);
      if (pair.substr(0, eq) == "password" && !raw.empty()) t.secrets.emplace_back(raw);
      take_parameter(t, pair.substr(0, eq), percent_decode(raw));
    }
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  return t;
}

// "host=h port=5432 dbname=boards password='x y'" (libpq's key=value form).
Target parse_keywords(std::string_view s) {
  Target t;
  std::size_t i = 0;
  const auto space = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  };
  while (true) {
    space();
    if (i >= s.size()) break;
    const std::size_t key_start = i;
    while (i < s.size() && s[i] != '=' && s[i] != ' ' && s[i] != '\t') ++i;
    const std::string_view key = s.substr(key_start, i - key_start);
    space();
    if (i >= s.size() || s[i] != '=') break;
    ++i;
    space();
    std::string value;
    if (i < s.size() && s[i] == '\'') {
      for (++i; i < s.size() && s[i] != '\''; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i];
      }
      ++i;
    } else {
      for (; i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i];
      }
    }
    take_parameter(t, key, value);
  }
  return t;
}

Target parse_target(std::string_view conninfo) {
  return is_url(conninfo) ? parse_url(conninfo) : parse_keywords(conninfo);
}

// ---- the shared connection ---------------------------------------------------------------

// One server connection with its prepared statements. A reader keeps the session it began
// on alive, so a reader that outlives its store (or a reconnect) stays valid.
struct Session {
  std::unique_ptr<pqxx::connection> conn;
  // NOTICEs are not printed to stderr; declared after conn, so destroyed before it.
  std::unique_ptr<pqxx::quiet_errorhandler> quiet;
  // Set when the connection broke: the store's next call connects afresh.
  bool broken = false;
};

// What every statement needs, shared by a store and its readers.
struct Link {
  std::string conninfo;              // holds the password: never shown
  std::string where;                 // "postgresql at host:port/db"
  std::vector<std::string> secrets;  // scrubbed from every message
  std::string schema;                // the plain name
  std::string q;                     // the schema quoted as an identifier
  std::shared_ptr<Session> session;  // the store's current connection

  // The store's session, connected afresh if there is none or it broke.
  Session& use();

  std::string scrub(std::string text) const {
    for (const std::string& secret : secrets) {
      if (secret.empty()) continue;
      for (std::size_t at = text.find(secret); at != std::string::npos;
           at = text.find(secret, at + 3)) {
        text.replace(at, secret.size(), "***");
      }
    }
    return text;
  }
};

// The first line of a libpq message, without its "ERROR:  " or "FATAL:  " tag.
std::string first_line(std::string text) {
  const std::size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  for (const std::string_view tag : {"ERROR:", "FATAL:"}) {
    if (text.rfind(tag, 0) == 0) {
      const std::size_t body = text.find_first_not_of(' ', tag.size());
      text.erase(0, body == std::string::npos ? text.size() : body);
    }
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

bool means_unavailable(const std::string& sqlstate) {
  return sqlstate.rfind("08", 0) == 0  // connection exception
         || sqlstate == "57P01"        // admin shutdown
         || sqlstate == "57P02"        // crash shutdown
         || sqlstate == "57P03"        // cannot connect now
         || sqlstate == "53300";       // too many connections
}

// Runs `f`, turning libpqxx exceptions into the bk::Error tree; a session whose connection
// broke is marked so.
template <class F>
auto guarded(const Link& link, Session* session, std::string_view doing, F&& f) -> decltype(f()) {
  const auto broke = [&] {
    if (session != nullptr) session->broken = true;
  };
  const auto prefix = [&] { return link.where + ": " + std::string(doing) + ": "; };
  try {
    return f();
  } catch (const bk::Error&) {
    throw;
  } catch (const pqxx::in_doubt_error&) {
    broke();
    throw Error(prefix() +
                "the connection broke while committing; whether the commit happened is unknown");
  } catch (const pqxx::broken_connection& e) {
    broke();
    throw UnavailableError(prefix() + (session == nullptr ? "" : "connection lost: ") +
                           link.scrub(first_line(e.what())));
  } catch (const pqxx::transaction_rollback& e) {
    throw Error(prefix() + "the server rolled the transaction back (" +
                link.scrub(first_line(e.what())) + "); retrying may succeed");
  } catch (const pqxx::sql_error& e) {
    const std::string message =
        prefix() + link.scrub(first_line(e.what())) + " (SQLSTATE " + e.sqlstate() + ")";
    if (means_unavailable(e.sqlstate())) {
      broke();
      throw UnavailableError(message);
    }
    throw Error(message);
  } catch (const pqxx::usage_error& e) {
    throw Error(prefix() + "misuse of the connection: " + link.scrub(first_line(e.what())));
  } catch (const std::exception& e) {
    throw Error(prefix() + link.scrub(first_line(e.what())));
  }
}

// ---- SQL text ----------------------------------------------------------------------------

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A fixed advisory lock key per schema (FNV-1a), the same in every process.
std::int64_t migration_lock_key(const std::string& schema) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : "boardkeeper.migrate." + schema) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::int64_t>(h);
}

void append_text_element(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// PostgreSQL array literals: every text element double-quoted, so commas, braces,
// whitespace and the word NULL are plain data.
class ArrayLiteral {
 public:
  void text(std::string_view s) {
    sep();
    append_text_element(out_, s);
  }
  void integer(std::int64_t v) {
    sep();
    out_ += std::to_string(v);
  }
  void null() {
    sep();
    out_ += "NULL";
  }
  std::string done() {
    out_ += '}';
    return std::move(out_);
  }

 private:
  void sep() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  std::string out_ = "{";
  bool first_ = true;
};

void check_text(std::string_view what, const std::string& s) {
  if (s.find('\0') != std::string::npos) {
    throw RefusedError("the cold tier cannot store a " + std::string(what) +
                       " that contains a NUL byte");
  }
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

std::string quote_identifier(const std::string& name) {
  return "\"" + replace_all(name, "\"", "\"\"") + "\"";
}

void prepare_statements(pqxx::connection& c, const std::string& q) {
  const std::string table = q + ".cold_members";
  const std::string hit_columns(kHitColumns);
  const std::string period = " board = $1 AND period = $2 AND period_id = $3 ";
  c.prepare("bk_cold_next_version", "SELECT nextval(" + c.quote(q + ".cold_version") + ")");
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
  c.prepare("bk_cold_delete_if_version",
            "DELETE FROM " + table + " WHERE" + period + "AND member = $4 AND version = $5");
  c.prepare("bk_cold_drop_period", "DELETE FROM " + table + " WHERE" + period);
  c.prepare("bk_cold_count", "SELECT count(*) FROM " + table + " WHERE" + period);
  c.prepare("bk_cold_count_better",
            "SELECT count(*) FROM " + table + " WHERE" + period + "AND encoded < $4");
  c.prepare("bk_cold_count_before", "SELECT count(*) FROM " + table + " WHERE" + period +
                                        "AND (encoded, member) < ($4, $5 COLLATE \"C\")");
  c.prepare("bk_cold_slice", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                 "ORDER BY encoded, member OFFSET $4 LIMIT $5");
  c.prepare("bk_cold_after", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                 "AND (encoded, member) > ($4, $5 COLLATE \"C\")"
                                 " ORDER BY encoded, member LIMIT $6");
  c.prepare("bk_cold_before", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                  "AND (encoded, member) < ($4, $5 COLLATE \"C\")"
                                  " ORDER BY encoded DESC, member DESC LIMIT $6");
  c.prepare("bk_cold_rows_for", "SELECT " + hit_columns + " FROM " + table + " WHERE" + period +
                                    "AND member = ANY($4::text[]) ORDER BY encoded, member");
}

Session& Link::use() {
  if (!session || session->broken) {
    auto fresh = std::make_shared<Session>();
    try {
      guarded(*this, nullptr, "cannot connect", [&] {
        fresh->conn = std::make_unique<pqxx::connection>(conninfo);
        fresh->quiet = std::make_unique<pqxx::quiet_errorhandler>(*fresh->conn);
        // libpqxx 6 would silently reconnect a broken connection at the next transaction
        // (sometimes failing once with an odd message); instead a break is reported as
        // UnavailableError and the store's next call connects afresh (see `broken`).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        fresh->conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
        prepare_statements(*fresh->conn, q);
      });
    } catch (const UnavailableError&) {
      throw;
    } catch (const Error& e) {  // whatever fails while connecting means "unreachable"
      throw UnavailableError(e.what());
    }
    session = std::move(fresh);  // a reader may still hold the old one
  }
  return *session;
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
  auto link = std::make_shared<Link>();
  const Target target = parse_target(url);
  link->conninfo = with_defaults(url);
  link->where = target.describe();
  link->secrets = target.secrets;
  link->q = quote_identifier(schema);
  link->schema = std::move(schema);
  link->use();
  impl_->link = std::move(link);
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

namespace {

// One spill: a fresh version, the rows in statements of kRowsPerStatement, one commit.
std::int64_t upsert_once(Session& session, const PeriodKey& period,
                         const std::vector<const ColdRow*>& rows) {
  pqxx::work w(*session.conn);
  const std::int64_t version = w.exec_prepared1("bk_cold_next_version")[0].as<std::int64_t>();
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
    w.exec_prepared("bk_cold_upsert", period.board, period.period, period.period_id, members.done(),
                    encoded.done(), points.done(), achieved.done(), version);
  }
  w.commit();
  return version;
}

}  // namespace

std::int64_t ColdStore::upsert(const PeriodKey& period, const std::vector<ColdRow>& rows) {
  Link& l = live(impl_);
  check_period(period);
  // Sorted by member (one lock order for concurrent spills of a period); for a member given
  // twice the last row wins, as one statement may not update a row twice.
  std::vector<const ColdRow*> order;
  order.reserve(rows.size());
  for (const ColdRow& r : rows) {
    check_text("member", r.member);
    order.push_back(&r);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const ColdRow* a, const ColdRow* b) { return a->member < b->member; });
  std::vector<const ColdRow*> unique;
  unique.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && order[i + 1]->member == order[i]->member) continue;
    unique.push_back(order[i]);
  }
  Session& session = l.use();
  return guarded(l, &session, "spilling to the cold tier", [&] {
    // A deadlock or serialization failure aborts the transaction with nothing committed,
    // so it is run again, a few times.
    for (int attempt = 1;; ++attempt) {
      try {
        return upsert_once(session, period, unique);
      } catch (const pqxx::deadlock_detected&) {
        if (attempt == 3) throw;
      } catch (const pqxx::serialization_failure&) {
        if (attempt == 3) throw;
      }
    }
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

bool ColdStore::delete_if_version(const PeriodKey& period, const std::string& member,
                                  std::int64_t version) {
  Link& l = live(impl_);
  check_period(period);
  check_text("member", member);
  Session& session = l.use();
  return guarded(l, &session, "deleting a cold member", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result res = n.exec_prepared("bk_cold_delete_if_version", period.board,
                                             period.period, period.period_id, member, version);
    return res.affected_rows() == 1;
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
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  return guarded(*impl_->link, impl_->session.get(), "counting cold members", [&] {
    return t
        .exec_prepared1("bk_cold_count_better", period.board, period.period, period.period_id,
                        encoded)[0]
        .as<std::int64_t>();
  });
}

std::int64_t ColdReader::count_before(const PeriodKey& period, std::int64_t encoded,
                                      const std::string& member) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  check_text("member", member);
  return guarded(*impl_->link, impl_->session.get(), "counting cold members", [&] {
    return t
        .exec_prepared1("bk_cold_count_before", period.board, period.period, period.period_id,
                        encoded, member)[0]
        .as<std::int64_t>();
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

std::vector<ColdHit> ColdReader::after(const PeriodKey& period, std::int64_t encoded,
                                       const std::string& member, std::int64_t limit) {
  ReadTxn& t = open_txn(impl_);
  check_period(period);
  check_text("member", member);
  if (limit <= 0) return {};
  return guarded(*impl_->link, impl_->session.get(), "listing cold members", [&] {
    return hits_from(t.exec_prepared("bk_cold_after", period.board, period.period, period.period_id,
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
