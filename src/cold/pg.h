// PostgreSQL plumbing shared by the cold store and the archive writer (internal to
// bk_cold): a connection that reports its breakage instead of silently reconnecting, and one
// mapping of libpqxx errors to bk errors, with passwords scrubbed from every message.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <pqxx/pqxx>
#pragma GCC diagnostic pop

#include "cold/error.h"
#include "cold/watched_call.h"
#include "core/redact.h"

namespace bk::cold::pg {

// One server connection with its prepared statements. A reader keeps the session it began
// on alive, so a reader that outlives its store (or a reconnect) stays valid.
struct Session {
  // A pqxx::connection, or one made under a CallDeadline (pg.cpp). A shared_ptr made for the
  // concrete type: connection_base's destructor is not virtual, and only the concrete one
  // closes the connection.
  std::shared_ptr<pqxx::connection_base> conn;
  // NOTICEs are not printed to stderr; declared after conn, so destroyed before it.
  std::unique_ptr<pqxx::quiet_errorhandler> quiet;
  // Set when the connection broke: the store's next call connects afresh.
  bool broken = false;
};

// What every statement needs, shared by a store and its readers.
struct Link {
  std::string conninfo;              // holds the password: never shown
  std::string where;                 // "postgresql at host:port/db"
  std::string schema;                // the plain name
  std::string q;                     // the schema quoted as an identifier
  std::shared_ptr<Session> session;  // the store's current connection

  // Registers the prepared statements of a fresh connection (may be empty).
  std::function<void(pqxx::connection_base&)> prepare;

  // The current session, connected afresh if there is none or it broke.
  Session& use();

  // `text` without any password (the process-wide redaction, core/redact.h).
  std::string scrub(std::string text) const { return redact(std::move(text)); }
};

// The first line of a libpq message, without its "ERROR:  " or "FATAL:  " tag.
std::string first_line(std::string text);
// SQLSTATEs that mean the server cannot be reached or ended the session.
bool means_unavailable(const std::string& sqlstate);

// Runs `f`, turning libpqxx exceptions into the bk::Error tree (cold/error.h); a session whose
// connection broke is marked so.
template <class F>
auto translated(const Link& link, Session* session, std::string_view doing, F&& f)
    -> decltype(f()) {
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
    throw PostgresError(
        prefix() + "the connection broke while committing; whether the commit happened is unknown");
  } catch (const pqxx::broken_connection& e) {
    broke();
    throw PostgresUnavailable(prefix() + (session == nullptr ? "" : "connection lost: ") +
                              link.scrub(first_line(e.what())));
  } catch (const pqxx::transaction_rollback& e) {
    throw PostgresError(prefix() + "the server rolled the transaction back (" +
                        link.scrub(first_line(e.what())) + "); retrying may succeed");
  } catch (const pqxx::sql_error& e) {
    const std::string message =
        prefix() + link.scrub(first_line(e.what())) + " (SQLSTATE " + e.sqlstate() + ")";
    if (means_unavailable(e.sqlstate())) {
      broke();
      throw PostgresUnavailable(message);
    }
    throw PostgresError(message);
  } catch (const pqxx::usage_error& e) {
    throw PostgresError(prefix() + "misuse of the connection: " + link.scrub(first_line(e.what())));
  } catch (const pqxx::failure& e) {
    // Some breaks (a COPY cut off by a terminated backend) arrive as a plain failure:
    // a connection that is no longer open means the server went away.
    if (session != nullptr && session->conn && !session->conn->is_open()) {
      broke();
      throw PostgresUnavailable(prefix() + "connection lost: " + link.scrub(first_line(e.what())));
    }
    throw PostgresError(prefix() + link.scrub(first_line(e.what())));
  } catch (const std::exception& e) {
    throw PostgresError(prefix() + link.scrub(first_line(e.what())));
  }
}

// `what` of the PostgresTimeout of a call that did not end by its deadline.
std::string no_answer(const Link& link, std::string_view doing);

// translated(), and within this thread's CallDeadline (cold/call_deadline.h): a call the
// deadline cut fails with PostgresTimeout, its session marked broken.
template <class F>
auto guarded(const Link& link, Session* session, std::string_view doing, F&& f) -> decltype(f()) {
  // A call whose answer came as its deadline cut the socket succeeds, and the session is
  // still marked broken (by the watch).
  WatchedCall watch(session != nullptr && session->conn ? session->conn->sock() : -1, link.where,
                    session != nullptr ? &session->broken : nullptr);
  try {
    if (watch.expired()) throw PostgresTimeout(no_answer(link, doing));
    return translated(link, session, doing, std::forward<F>(f));
  } catch (const Error&) {
    if (!watch.end()) throw;
    throw PostgresTimeout(no_answer(link, doing));
  }
}

// A link to `url` (its password never shown: see Link::where and Link::scrub), connected.
// Throws UnavailableError when the server cannot be reached.
std::shared_ptr<Link> connect(const std::string& url, std::string schema,
                              std::function<void(pqxx::connection_base&)> prepare = {});

// PostgreSQL array literals for a text[] or bigint[] parameter: every text element
// double-quoted, so commas, braces, whitespace and the word NULL are plain data.
class ArrayLiteral {
 public:
  void text(std::string_view s);
  void integer(std::int64_t v);
  void null();
  std::string done();

 private:
  void sep();
  std::string out_ = "{";
  bool first_ = true;
};

std::string replace_all(std::string text, std::string_view from, std::string_view to);
std::string quote_identifier(const std::string& name);
// A string constant in SQL (standard_conforming_strings: only ' is doubled).
std::string quote_literal(const std::string& text);

}  // namespace bk::cold::pg
