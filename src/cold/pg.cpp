// Connection strings, what they point at, the shared connection, error mapping.
#include "cold/pg.h"

namespace bk::cold::pg {
namespace {

// Connection parameters added unless the connection string sets them: a bounded connect,
// and UTF-8 on the wire whatever the server's or the environment's default.
constexpr std::string_view kDefaultParameters[][2] = {{"connect_timeout", "5"},
                                                      {"client_encoding", "UTF8"}};

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

}  // namespace

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
        // A client that vanishes without a goodbye (its host or the network gone: no FIN)
        // must not keep its locks, such as a tick's period claims, for the two hours of the
        // system's default keepalive. The server probes a silent client after 10 s and gives
        // up after 3 probes 5 s apart; drops one that leaves sent data unacknowledged for
        // 20 s; checks every 5 s during a long statement that its client is still there.
        // A statement waits at most 30 s for a lock (migrate, ANALYZE and partition creation
        // lift this for themselves). No statement_timeout or idle_session_timeout: an
        // archive's COPY may rightly run long, and a spill holds its period lock on an
        // otherwise idle session. Settings the server does not know yet are left out.
        const int server = fresh->conn->server_version();
        std::string settings =
            "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5;"
            " SET tcp_keepalives_count = 3; SET lock_timeout = '30s'";
        if (server >= 120000) settings += "; SET tcp_user_timeout = 20000";
        pqxx::nontransaction(*fresh->conn).exec(settings);
        if (server >= 140000) {
          try {  // refused on platforms that cannot tell (not Linux): the rest still holds
            pqxx::nontransaction(*fresh->conn).exec("SET client_connection_check_interval = 5000");
          } catch (const pqxx::sql_error&) {
          }
        }
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
                              std::function<void(pqxx::connection&)> prepare) {
  auto link = std::make_shared<Link>();
  const Target target = parse_target(url);
  link->conninfo = with_defaults(url);
  link->where = target.describe();
  link->secrets = target.secrets;
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

}  // namespace bk::cold::pg
