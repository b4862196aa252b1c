// PostgreSQL connection strings (URL or key=value form) read by libpq itself: what they point
// at, for messages, and the string to connect with, with safe defaults added.
#pragma once
#include <string>
#include <string_view>

namespace bk::cold {

struct Conninfo {
  std::string conninfo;  // key=value form with the defaults added; holds the password
  std::string where;     // "postgresql at host:port/dbname", never a password
};

// Parses `url` with libpq's PQconninfoParse and registers every text in it that could be the
// password (core/redact.h) before anything else. Adds connect_timeout=5 and
// client_encoding=UTF8 unless the string sets them. Throws UsageError naming what is wrong
// (percent-escape, IPv6 bracket, query parameter, port, host...) without echoing any of it.
Conninfo parse_conninfo(std::string_view url);

}  // namespace bk::cold
