// Redis URL parsing. Messages name the part that is wrong and never quote the URL: any part of
// it may be (or, misread, hold) the password.
#include "redis/url.h"

#include <charconv>

#include "core/error.h"
#include "core/percent.h"
#include "core/text.h"

namespace bk::redis {
namespace {

constexpr std::string_view kRedis = "redis://";
constexpr std::string_view kRediss = "rediss://";
constexpr std::string_view kUnix = "unix://";

[[noreturn]] void bad(const std::string& what) {
  throw UsageError("redis URL: " + what);
}

// A decimal number in [low, high], digits only.
bool parse_number(std::string_view s, int low, int high, int& out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  if (v < low || v > high) return false;
  out = v;
  return true;
}

std::string decoded(std::string_view s, std::string_view part) {
  auto out = percent_decode(s);
  if (!out) {
    bad("bad percent-escape in the " + std::string(part) +
        " (a '%' must be followed by two hex digits; write '%' itself as %25)");
  }
  return std::move(*out);
}

int database(std::string_view s) {
  int db = 0;
  if (!s.empty() && !parse_number(s, 0, 1000000, db)) {
    bad("bad database number (expected /N with N a number from 0)");
  }
  return db;
}

void take_userinfo(std::string_view userinfo, Options& o) {
  const auto colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    o.password = decoded(userinfo, "password");  // redis://secret@host is a bare password
  } else {
    o.username = decoded(userinfo.substr(0, colon), "user name");
    o.password = decoded(userinfo.substr(colon + 1), "password");
  }
}

void take_host_port(std::string_view hostport, Options& o) {
  std::string_view host = hostport;
  std::string_view port;
  if (!hostport.empty() && hostport.front() == '[') {
    const auto close = hostport.find(']');
    if (close == std::string_view::npos) bad("the '[' of an IPv6 host is not closed");
    host = hostport.substr(1, close - 1);
    const std::string_view after = hostport.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      bad("unexpected text after the ']' of an IPv6 host (expected ':port')");
    }
    port = after.empty() ? after : after.substr(1);
    if (!after.empty() && port.empty()) bad("empty port (expected a number from 1 to 65535)");
  } else {
    const auto colon = hostport.find(':');
    if (colon != std::string_view::npos) {
      if (hostport.find(':', colon + 1) != std::string_view::npos) {
        bad("an IPv6 host must be in brackets, e.g. redis://[::1]:6379");
      }
      host = hostport.substr(0, colon);
      port = hostport.substr(colon + 1);
      if (port.empty()) bad("empty port (expected a number from 1 to 65535)");
    }
  }
  o.host = decoded(host, "host");
  if (o.host.empty()) bad("no host (expected redis://host[:port][/db])");
  if (!port.empty() && !parse_number(port, 1, 65535, o.port)) {
    bad("bad port (expected a number from 1 to 65535)");
  }
}

Options parse_unix(std::string_view rest) {
  Options o;
  const auto q = rest.find('?');
  o.unix_path = std::string(rest.substr(0, q));
  if (o.unix_path.find('@') != std::string::npos) {
    bad("a user or password ('...@') in a unix:// URL is not supported");
  }
  if (o.unix_path.empty()) bad("unix:// needs a socket path");
  if (q != std::string_view::npos) {
    const std::string_view query = rest.substr(q + 1);
    if (!starts_with(query, "db=")) bad("unknown query in a unix:// URL (only ?db=N)");
    o.db = database(query.substr(3));
  }
  return o;
}

}  // namespace

Options parse_url(std::string_view url) {
  if (starts_with(url, kUnix)) return parse_unix(url.substr(kUnix.size()));
  Options o;
  o.tls.enabled = starts_with(url, kRediss);
  if (!o.tls.enabled && !starts_with(url, kRedis)) {
    bad("it must start with redis://, rediss:// (TLS) or unix://");
  }
  std::string_view rest = url.substr(o.tls.enabled ? kRediss.size() : kRedis.size());
  const auto at = rest.rfind('@');
  if (at != std::string_view::npos) {
    take_userinfo(rest.substr(0, at), o);
    rest = rest.substr(at + 1);
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    bad("a query or fragment ('?' or '#' after the host) is not supported");
  }
  const auto slash = rest.find('/');
  take_host_port(rest.substr(0, slash), o);
  if (slash != std::string_view::npos) o.db = database(rest.substr(slash + 1));
  return o;
}

Options parse_url(std::string_view url, std::string_view source) {
  try {
    return parse_url(url);
  } catch (const UsageError& e) {
    throw UsageError(e.what() + std::string(source));
  }
}

namespace {

// The "/db" part of a redis:// or rediss:// URL, "" when it has none (the user info, which
// may hold '/', ends at the last '@').
std::string_view database_part(std::string_view url) {
  const auto scheme_end = url.find("://");
  std::string_view rest = url.substr(scheme_end == std::string_view::npos ? 0 : scheme_end + 3);
  const auto at = rest.rfind('@');
  if (at != std::string_view::npos) rest = rest.substr(at + 1);
  const auto slash = rest.find('/');
  return slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
}

// The scheme followed by something.
bool has_scheme(std::string_view url, std::string_view scheme) {
  return starts_with(url, scheme) && url.size() > scheme.size();
}

}  // namespace

std::optional<std::string> scheme_problem(std::string_view url) {
  for (const std::string_view scheme : {kRedis, kRediss, kUnix}) {
    if (has_scheme(url, scheme)) return std::nullopt;
  }
  return "is not a Redis URL (" + describe_url_scheme(url) +
         "); expected redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or "
         "unix:///path/to/socket[?db=N]";
}

std::optional<std::string> seed_problem(std::string_view seed, std::string_view url) {
  if (!has_scheme(seed, kRedis) && !has_scheme(seed, kRediss)) {
    return "each seed must be a redis:// or rediss:// URL (host and port), but " +
           describe_url_scheme(seed);
  }
  const bool tls = starts_with(url, kRediss);
  if (starts_with(seed, kRediss) != tls) {
    return "a seed's scheme must be the url's (" + std::string(tls ? kRediss : kRedis) +
           "): every node of a cluster is reached the same way";
  }
  return std::nullopt;
}

std::optional<std::string> cluster_url_problem(std::string_view url) {
  if (starts_with(url, kUnix)) {
    return std::string(
        "a Redis Cluster is reached over TCP (redis://host:port), not a unix socket");
  }
  if (const std::string_view db = database_part(url); !db.empty() && db != "0") {
    return std::string("a Redis Cluster has only database 0; remove the /db from the URL");
  }
  return std::nullopt;
}

namespace {
std::string host_and_port(const Options& o) {
  const bool v6 = o.host.find(':') != std::string::npos;
  return (v6 ? "[" + o.host + "]" : o.host) + ":" + std::to_string(o.port);
}
}  // namespace

std::string endpoint(const Options& o) {
  return o.unix_path.empty() ? host_and_port(o) : o.unix_path;
}

std::string describe(const Options& o) {
  const std::string host_port = host_and_port(o);
  if (o.cluster) {
    return "cluster via " + host_port +
           (o.seeds.empty() ? "" : " (+" + std::to_string(o.seeds.size()) + " seeds)") +
           (o.tls.enabled ? " (TLS)" : "");
  }
  const std::string db = " db " + std::to_string(o.db);
  if (!o.unix_path.empty()) return "unix socket " + o.unix_path + db;
  return host_port + db + (o.tls.enabled ? " (TLS)" : "");
}

}  // namespace bk::redis
