// Redis URL parsing, with percent-decoding of user and password.
#include "redis/url.h"

#include <charconv>

#include "core/error.h"

namespace bk::redis {
namespace {

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int v = 0;
      if (std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ec == std::errc{}) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

int parse_number(std::string_view s, std::string_view what) {
  int v = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size() || v < 0) {
    throw UsageError("redis URL: bad " + std::string(what) + " '" + std::string(s) + "'");
  }
  return v;
}

}  // namespace

Options parse_url(std::string_view url) {
  Options o;
  if (url.rfind("unix://", 0) == 0) {
    std::string_view rest = url.substr(7);
    const auto q = rest.find('?');
    o.unix_path = std::string(rest.substr(0, q));
    if (q != std::string_view::npos) {
      const std::string_view query = rest.substr(q + 1);
      if (query.rfind("db=", 0) != 0) throw UsageError("redis URL: unknown query in unix URL");
      o.db = parse_number(query.substr(3), "database number");
    }
    if (o.unix_path.empty()) throw UsageError("redis URL: unix:// needs a socket path");
    return o;
  }
  if (url.rfind("redis://", 0) != 0) {
    throw UsageError("redis URL must start with redis:// or unix://");
  }
  std::string_view rest = url.substr(8);
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    o.db = parse_number(rest.substr(slash + 1), "database number");
  }
  const auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      o.password = percent_decode(userinfo);  // redis://secret@host is a bare password
    } else {
      o.username = percent_decode(userinfo.substr(0, colon));
      o.password = percent_decode(userinfo.substr(colon + 1));
    }
  }
  const auto colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    o.host = std::string(authority.substr(0, colon));
    o.port = parse_number(authority.substr(colon + 1), "port");
  } else {
    o.host = std::string(authority);
  }
  if (o.host.empty()) throw UsageError("redis URL has no host");
  if (o.port < 1 || o.port > 65535) throw UsageError("redis URL: port out of range");
  return o;
}

}  // namespace bk::redis
