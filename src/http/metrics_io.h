// Getting metrics out of the process: the node_exporter textfile form (an atomically
// replaced file) and the Pushgateway (an HTTP or HTTPS PUT or POST, basic auth optional).
#pragma once
#include <chrono>
#include <string>
#include <string_view>

#include "core/metrics.h"
#include "http/net.h"

namespace bk::http {

// The content type of the Prometheus text format.
inline constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

// boardkeeper_build_info{version="..."} 1
void add_build_info(metrics::Registry& registry);
// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds (the names of Prometheus'
// client libraries), read from /proc now; nothing where there is no /proc. Call it before
// each render.
void update_process_metrics(metrics::Registry& registry);
// Seconds since the epoch of the system clock (real time, whatever --now says).
double unix_now();

// Writes `content` to PATH.tmp.<pid>, fsyncs it, renames it over `path` and fsyncs the
// directory: a reader sees the old file or the new one, never a part. Throws bk::Error.
void write_file_atomically(const std::string& path, std::string_view content);
// The text of `path`, or empty when it cannot be read.
std::string read_file_or_empty(const std::string& path);
// Throws UsageError when the directory `path` would be written in does not exist.
void check_writable_dir(const std::string& path, std::string_view flag);

struct HttpUrl {
  bool https = false;
  net::HostPort where;
  std::string path;            // without a trailing slash; empty for the root
  std::string user, password;  // basic auth, percent-decoded; empty: none
};
// http[s]://[user:password@]host[:port][/path] (the user info ends at the last '@'). Registers
// any password in it (core/redact.h), then throws UsageError naming `flag` and what is
// wrong, never the URL, for anything else (another scheme, a query, a bad escape).
HttpUrl parse_http_url(std::string_view url, std::string_view flag);

struct HttpReply {
  int status = 0;
  std::string body;
};
// One request (PUT or POST) on a connection of its own, each step bounded by `timeout`.
// Throws bk::Error when the server cannot be reached, its certificate does not verify, or it
// answers something that is not HTTP.
HttpReply http_request(const HttpUrl& url, std::string_view method, const std::string& path,
                       std::string_view content_type, std::string_view body,
                       std::chrono::milliseconds timeout);

// Pushes `text` to <gateway>/metrics/job/<job>: PUT replaces every metric of the group,
// POST only those with the names pushed. Throws bk::Error unless the gateway answers 2xx.
void push_metrics(const HttpUrl& gateway, const std::string& job, bool replace,
                  std::string_view text);

}  // namespace bk::http
