// Redis connection options and the URL form they are written in.
#pragma once
#include <string>
#include <string_view>

#include "core/time.h"

namespace bk::redis {

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string unix_path;  // set for unix:// URLs
  std::string username;
  std::string password;
  int db = 0;
  Millis connect_timeout{2000};
  Millis command_timeout{10000};
};

// redis://[[user]:password@]host[:port][/db] or unix:///path/to/socket[?db=N].
// Throws UsageError for anything else (the message never contains the password).
Options parse_url(std::string_view url);

}  // namespace bk::redis
