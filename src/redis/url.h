// Redis connection options and the URL form they are written in.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/shun.h"
#include "core/time.h"

namespace bk::redis {

// TLS (rediss://, `redis.tls`): the same for every node of a cluster.
struct TlsOptions {
  bool enabled = false;
  std::string ca_file;      // the CA to verify the server with; empty: the system store
  std::string cert_file;    // client certificate (chain) for mutual TLS, with key_file
  std::string key_file;     // its private key (PEM, no passphrase)
  std::string server_name;  // the name the certificate must carry; empty: the host
};

struct Options {
  std::string host = "127.0.0.1";  // an IPv6 address without its brackets
  int port = 6379;
  std::string unix_path;  // set for unix:// URLs
  std::string username;
  std::string password;
  int db = 0;
  Millis connect_timeout{2000};
  Millis command_timeout{10000};
  // Redis Cluster (`redis.cluster`): this host:port and `seeds` are where the topology is
  // first asked for (CLUSTER SLOTS); every node gets the same user and password; db is 0.
  TlsOptions tls;  // tls.enabled by rediss://
  bool cluster = false;
  std::vector<std::pair<std::string, int>> seeds;  // host, port
  // Not part of the URL: what this connection is for, when a process holds several. CLIENT
  // LIST names a connection "boardkeeper:<pid>", or "boardkeeper:<pid>:<role>" with one.
  std::string role;
  // Shared by the connections of a process that must not each wait out a frozen server
  // (serve's workers): set, a connect or command that ran out its timeout shuns that server
  // (a cluster node: that node), and connecting to it fails at once with TimeoutError while
  // the shun lasts (core/shun.h).
  std::shared_ptr<Shuns> shuns;
};

// redis[s]://[[user]:password@]host[:port][/db] (rediss: TLS) (host: a name, an IPv4 address or an
// IPv6 one in brackets) or unix:///path/to/socket[?db=N]. The user info ends at the LAST '@', so a
// password may hold '/', '?', '#' and '@' as they are; a '%' starts an escape of two hex digits.
// User, password and host are percent-decoded. Throws UsageError naming the part that is wrong
// (scheme, user, password, host, port, database number, query) without echoing any of the URL.
Options parse_url(std::string_view url);

// parse_url, its UsageError ending with where the URL came from: `source` is appended as is,
// e.g. " (from BOARDKEEPER_REDIS_URL)".
Options parse_url(std::string_view url, std::string_view source);

// The quick checks a config file gets at each URL's own line (parse_url reads the rest later).
// Each returns why the URL is refused, or nullopt; the text never quotes the URL.

// Not redis://..., rediss://... or unix://... with something after the scheme: "is not a
// Redis URL (it starts with 'http://'); expected redis://...".
std::optional<std::string> scheme_problem(std::string_view url);

// A seed of a Redis Cluster (redis.nodes) reached through `url`: a redis:// or rediss:// URL
// with the same scheme as `url` (every node of a cluster is reached the same way).
std::optional<std::string> seed_problem(std::string_view seed, std::string_view url);

// A URL a Redis Cluster cannot be reached through: a unix socket, or a database other than 0.
std::optional<std::string> cluster_url_problem(std::string_view url);

// The server's address for messages: "host:port", "[::1]:port" or the socket path.
std::string endpoint(const Options& options);

// Where the options point, for messages: "127.0.0.1:6379 db 0", "[::1]:6379 db 0",
// "unix socket /run/redis.sock db 2". Never the user or the password.
std::string describe(const Options& options);

}  // namespace bk::redis
