// Connection strings through PQconninfoParse, never by hand: what libpq will connect to is
// exactly what the messages describe. libpq's own parse errors quote the string, so they are
// replaced by ours.
#include "cold/conninfo.h"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/redact.h"

namespace bk::cold {
namespace {

// Connection parameters added unless the connection string sets them: a bounded connect,
// and UTF-8 on the wire whatever the server's or the environment's default.
constexpr std::string_view kDefaultParameters[][2] = {{"connect_timeout", "5"},
                                                      {"client_encoding", "UTF8"}};

bool is_url(std::string_view s) {
  return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0;
}

struct FreeOptions {
  void operator()(PQconninfoOption* o) const { PQconninfoFree(o); }
};
struct FreeMemory {
  void operator()(char* p) const { PQfreemem(p); }
};
using Options = std::unique_ptr<PQconninfoOption, FreeOptions>;

// A raw '/', '@', '?' or '#' in a URL's user info makes libpq read another host, port or
// database than meant: said next to any error it may have caused.
std::string hint(std::string_view url) {
  if (!is_url(url)) return "";
  const std::string_view rest = url.substr(url.find("://") + 3);
  const std::size_t last_at = rest.rfind('@');
  if (last_at == std::string_view::npos) return "";
  const std::string_view userinfo = rest.substr(0, last_at);
  if (userinfo.find_first_of("/@") == std::string_view::npos) return "";
  return " (in a URL, write '/' as %2F and '@' as %40 in the user name and password)";
}

// libpq's message (which quotes the string) replaced by what it is about.
std::string parse_problem(std::string_view message) {
  const auto has = [&](std::string_view s) { return message.find(s) != std::string_view::npos; };
  if (message.empty()) return "libpq ran out of memory reading it";
  if (has("percent-encoded")) {
    return "bad percent-escape (a '%' must be followed by two hex digits, not %00; write '%' "
           "itself as %25)";
  }
  if (has("IPv6")) return "the '[' of an IPv6 host is not closed";
  if (has("invalid URI query parameter")) return "unknown query parameter";
  if (has("key/value separator")) return "a query parameter is not one name=value";
  if (has("unexpected spaces")) return "spaces must be percent-encoded (%20)";
  if (has("invalid connection option")) return "unknown connection parameter";
  if (has("missing \"=\"")) {
    return "a parameter has no '=' (quote values that hold spaces: password='a b')";
  }
  if (has("unterminated quoted string")) return "a quoted value is not closed";
  return "libpq cannot read it";
}

// Each port of a (comma-separated) list: empty (the default) or 1 to 65535.
bool ports_ok(std::string_view ports) {
  for (std::size_t start = 0; start <= ports.size();) {
    const std::size_t end = std::min(ports.find(',', start), ports.size());
    const std::string_view port = ports.substr(start, end - start);
    if (!port.empty()) {
      if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
          std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535) {
        return false;
      }
    }
    start = end + 1;
  }
  return true;
}

// A host name never holds '@' (a socket directory, starting with '/', may).
bool hosts_ok(std::string_view hosts) {
  for (std::size_t start = 0; start <= hosts.size();) {
    const std::size_t end = std::min(hosts.find(',', start), hosts.size());
    const std::string_view host = hosts.substr(start, end - start);
    if (!host.empty() && host.front() != '/' && host.find('@') != std::string_view::npos) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

// key='value' with \ and ' escaped, as libpq reads it.
std::string quoted(std::string_view value) {
  std::string out = "'";
  for (const char c : value) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string value_of(const Options& options, std::string_view key) {
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->keyword == key && o->val != nullptr) return o->val;
  }
  return "";
}

bool is_set(const Options& options, std::string_view key) {
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->keyword == key) return o->val != nullptr;
  }
  return false;
}

// "h1,[::1]": each IPv6 address of a host list in brackets, so that the port stays apart.
std::string bracketed(std::string_view hosts) {
  std::string out;
  for (std::size_t start = 0; start <= hosts.size();) {
    const std::size_t end = std::min(hosts.find(',', start), hosts.size());
    const std::string_view host = hosts.substr(start, end - start);
    if (!out.empty() || start > 0) out += ',';
    const bool v6 = host.find(':') != std::string_view::npos && host.front() != '/';
    out += v6 ? "[" + std::string(host) + "]" : std::string(host);
    start = end + 1;
  }
  return out;
}

std::string describe(const Options& options) {
  std::string host = value_of(options, "host");
  if (host.empty()) host = value_of(options, "hostaddr");
  std::string out =
      "postgresql at " + (host.empty() ? std::string("(default host)") : bracketed(host));
  const std::string port = value_of(options, "port");
  if (!port.empty()) out += ":" + port;
  return redact(out + "/" + value_of(options, "dbname"));
}

std::string serialize_with_defaults(const Options& options) {
  std::string out;
  const auto add = [&](std::string_view key, std::string_view value) {
    if (!out.empty()) out += ' ';
    out += std::string(key) + "=" + quoted(value);
  };
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr) add(o->keyword, o->val);
  }
  for (const auto& [key, value] : kDefaultParameters) {
    if (!is_set(options, key)) add(key, value);
  }
  return out;
}

}  // namespace

Conninfo parse_conninfo(std::string_view url) {
  add_url_secrets(url);
  const std::string what = is_url(url) ? "postgresql URL: " : "postgresql connection string: ";
  char* raw_error = nullptr;
  const Options options(PQconninfoParse(std::string(url).c_str(), &raw_error));
  const std::unique_ptr<char, FreeMemory> error(raw_error);
  if (!options) {
    throw UsageError(what + parse_problem(error ? error.get() : "") + hint(url));
  }
  // The password libpq read. A well-formed string's is registered above whatever its length;
  // a misread URL's (a raw '@' in the password) may be a piece of it, registered as the pieces
  // are: from 3 characters, so that no message is left with every "ab" hidden.
  const std::string password = value_of(options, "password");
  if (password.size() >= 3) add_secret(password);
  if (!hosts_ok(value_of(options, "host"))) {
    throw UsageError(what + "a host holds an '@'" + hint(url));
  }
  const std::string port = value_of(options, "port");
  if (!ports_ok(port)) {
    const bool v6 = port.find(':') != std::string::npos;
    throw UsageError(
        what + "bad port (expected a number from 1 to 65535)" +
        (v6 ? " (an IPv6 host must be in brackets: postgresql://[::1]:5432/db)" : hint(url)));
  }
  return {serialize_with_defaults(options), describe(options)};
}

}  // namespace bk::cold
