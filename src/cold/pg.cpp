// The shared connection and the mapping of its errors (connection strings: cold/conninfo.cpp).
#include "cold/pg.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>

#include "cold/call_deadline.h"
#include "cold/conninfo.h"

namespace bk::cold::pg {

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

namespace {

std::string no_answer_at(const std::string& where, std::string_view doing) {
  return where + ": " + std::string(doing) +
         ": no answer within the call's deadline (the server may be hung); the connection is "
         "dropped";
}

struct PgFinish {
  void operator()(PGconn* c) const { PQfinish(c); }
};

// The handshake of a connection to `link`, each wait watched against this thread's deadline
// like any call: libpq's connect_timeout is whole seconds (at least 2) and PQconnectPoll
// ignores it, and the socket may change on the way (the next address of a name, SSL tried
// and then not), so every step watches the socket it waits on. A name is resolved before
// the first step, unwatched (give the server as an address where that matters). Each wait
// is also bounded by poll()'s own timeout, so that a step the watchdog could not watch (no
// descriptor left to duplicate) still ends by the deadline.
PGconn* connect_within(const std::string& conninfo, const std::string& where) {
  const auto timeout = [&] { return PostgresTimeout(no_answer_at(where, "cannot connect")); };
  std::unique_ptr<PGconn, PgFinish> conn(PQconnectStart(conninfo.c_str()));
  if (!conn) throw std::bad_alloc();
  PGconn* c = conn.get();
  for (PostgresPollingStatusType s = PGRES_POLLING_WRITING; s != PGRES_POLLING_OK;
       s = PQconnectPoll(c)) {
    if (s == PGRES_POLLING_FAILED || PQstatus(c) == CONNECTION_BAD) {
      throw pqxx::broken_connection(PQerrorMessage(c));
    }
    WatchedCall watch(PQsocket(c), where);
    if (watch.expired()) throw timeout();
    pollfd p{PQsocket(c), static_cast<short>(s == PGRES_POLLING_WRITING ? POLLOUT : POLLIN), 0};
    int ready = 0;
    do {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          call_deadline().value_or(std::chrono::steady_clock::now()) -
          std::chrono::steady_clock::now());
      ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    } while (ready < 0 && errno == EINTR);
    // A TCP connect to a frozen server completes all the same: no step but the last is an
    // answer (the session's first statement, next, is).
    if (watch.end(false) || ready == 0) throw timeout();
  }
  return conn.release();
}

// pqxx's connection policy for connect_within: the whole handshake at construction.
class ConnectWithin : public pqxx::connectionpolicy {
 public:
  ConnectWithin(const std::string& conninfo, std::string where)
      : pqxx::connectionpolicy(conninfo), where_(std::move(where)) {}
  handle do_startconnect(handle orig) override {
    return orig != nullptr ? orig : connect_within(options(), where_);
  }

 private:
  std::string where_;
};

// pqxx::basic_connection_base's shape, with a policy that takes two arguments.
class DeadlineConnection : public pqxx::connection_base {
 public:
  explicit DeadlineConnection(const Link& link)
      : pqxx::connection_base(policy_), policy_(link.conninfo, link.where) {
    init();
  }
  ~DeadlineConnection() noexcept { close(); }
  DeadlineConnection(const DeadlineConnection&) = delete;
  DeadlineConnection& operator=(const DeadlineConnection&) = delete;

 private:
  ConnectWithin policy_;
};

// A connection to `link`: under a CallDeadline by connect_within; without one, libpq's
// connect_timeout bounds it (cold/conninfo.h adds one).
std::shared_ptr<pqxx::connection_base> open_connection(const Link& link) {
  if (!call_deadline()) return std::make_shared<pqxx::connection>(link.conninfo);
  return std::make_shared<DeadlineConnection>(link);
}

// A client that vanishes without a goodbye (its host or the network gone: no FIN) must not
// keep its locks, such as a tick's period claims, for the two hours of the system's default
// keepalive. The server probes a silent client after 10 s and gives up after 3 probes 5 s
// apart; drops one that leaves sent data unacknowledged for 20 s; checks every 5 s during a
// long statement that its client is still there (which also ends the statement of a call
// whose deadline cut its socket). A statement waits at most 30 s for a lock (migrate, ANALYZE
// and partition creation lift this for themselves). No statement_timeout or
// idle_session_timeout: an archive's COPY may rightly run long, and a spill holds its period
// lock on an otherwise idle session. Settings the server does not know yet are left out.
void set_up_session(pqxx::connection_base& conn) {
  const int server = conn.server_version();
  std::string settings =
      "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5;"
      " SET tcp_keepalives_count = 3; SET lock_timeout = '30s'";
  if (server >= 120000) settings += "; SET tcp_user_timeout = 20000";
  pqxx::nontransaction(conn).exec(settings);
  if (server >= 140000) {
    try {  // refused on platforms that cannot tell (not Linux): the rest still holds
      pqxx::nontransaction(conn).exec("SET client_connection_check_interval = 5000");
    } catch (const pqxx::sql_error&) {
    }
  }
}

}  // namespace

std::string no_answer(const Link& link, std::string_view doing) {
  return no_answer_at(link.where, doing);
}

Session& Link::use() {
  if (!session || session->broken) {
    auto fresh = std::make_shared<Session>();
    try {
      guarded(*this, nullptr, "cannot connect", [&] {
        fresh->conn = open_connection(*this);
        fresh->quiet = std::make_unique<pqxx::quiet_errorhandler>(*fresh->conn);
        // libpqxx 6 would silently reconnect a broken connection at the next transaction
        // (sometimes failing once with an odd message); instead a break is reported as
        // UnavailableError and the store's next call connects afresh (see `broken`).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        fresh->conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
      });
      guarded(*this, fresh.get(), "cannot connect", [&] {
        set_up_session(*fresh->conn);
        if (prepare) prepare(*fresh->conn);
      });
    } catch (const UnavailableError&) {
      throw;
    } catch (const Error& e) {  // whatever fails while connecting means "unreachable"
      throw PostgresUnavailable(e.what());
    }
    session = std::move(fresh);  // a reader may still hold the old one
  }
  return *session;
}

std::shared_ptr<Link> connect(const std::string& url, std::string schema,
                              std::function<void(pqxx::connection_base&)> prepare) {
  auto link = std::make_shared<Link>();
  Conninfo parsed = parse_conninfo(url);
  link->conninfo = std::move(parsed.conninfo);
  link->where = std::move(parsed.where);
  link->q = quote_identifier(schema);
  link->schema = std::move(schema);
  link->prepare = std::move(prepare);
  link->use();
  return link;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string quote_identifier(const std::string& name) {
  return "\"" + replace_all(name, "\"", "\"\"") + "\"";
}

std::string quote_literal(const std::string& text) {
  return "'" + replace_all(text, "'", "''") + "'";
}

void ArrayLiteral::text(std::string_view s) {
  sep();
  out_ += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') out_ += '\\';
    out_ += c;
  }
  out_ += '"';
}

void ArrayLiteral::integer(std::int64_t v) {
  sep();
  out_ += std::to_string(v);
}

void ArrayLiteral::null() {
  sep();
  out_ += "NULL";
}

std::string ArrayLiteral::done() {
  out_ += '}';
  return std::move(out_);
}

void ArrayLiteral::sep() {
  if (!first_) out_ += ',';
  first_ = false;
}

}  // namespace bk::cold::pg
