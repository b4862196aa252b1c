// File and Pushgateway output of the metrics text.
#include "cli/metrics_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/redact.h"
#include "version.h"

namespace bk::cli {
namespace {

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void add_build_info(metrics::Registry& registry) {
  registry.gauge("boardkeeper_build_info", "Always 1; the version of boardkeeper running.")
      .set(1, {{"version", kVersion}});
}

double unix_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::duration<double>>(now).count();
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const auto fail = [&](const std::string& doing) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Error("metrics file " + path + ": " + doing + ": " + why);
  };
  {
    const net::Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) throw fail("cannot create " + tmp);
    std::string_view rest = content;
    while (!rest.empty()) {
      const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw fail("cannot write " + tmp);
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::fsync(fd.get()) != 0) throw fail("cannot fsync " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("cannot rename " + tmp);
  // The rename itself is durable once the directory is synced.
  const net::Fd dir(::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir) ::fsync(dir.get());
}

std::string read_file_or_empty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_writable_dir(const std::string& path, std::string_view flag) {
  struct stat st {};
  const std::string dir = dir_of(path);
  if (path.empty() || path.back() == '/') {
    throw UsageError(std::string(flag) + " '" + path + "' must name a file");
  }
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw UsageError(std::string(flag) + " '" + path + "': directory " + dir + " does not exist");
  }
}

HttpUrl parse_http_url(std::string_view url, std::string_view flag) {
  add_url_secrets(url);
  // The URL itself is never echoed: it may hold a password.
  const auto bad = [&](const std::string& why) {
    return UsageError(std::string(flag) + ": " + why + " (expected http://host[:port][/path])");
  };
  constexpr std::string_view kScheme = "http://";
  if (url.rfind("https://", 0) == 0) throw bad("only plain http:// is supported");
  if (url.rfind(kScheme, 0) != 0) throw bad("the URL must start with http://");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find('@') != std::string_view::npos) {
    throw bad("a user or password ('...@') is not supported");
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.empty()) throw bad("no host");
  if (rest.find_first_of("?#") != std::string_view::npos) throw bad("no query or fragment");
  HttpUrl out;
  const bool has_port = authority.front() == '[' ? authority.find("]:") != std::string_view::npos
                                                 : authority.find(':') != std::string_view::npos;
  try {
    out.where = net::parse_host_port(
        has_port ? std::string(authority) : std::string(authority) + ":80", flag);
  } catch (const UsageError&) {
    throw bad("bad host or port (an IPv6 host goes in brackets; a port is 1 to 65535)");
  }
  if (out.where.host.empty()) throw bad("no host");
  if (out.where.port == "0") throw bad("port 0");
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.path = std::string(path);
  return out;
}

HttpReply http_request(const HttpUrl& url, std::string_view method, const std::string& path,
                       std::string_view content_type, std::string_view body,
                       std::chrono::milliseconds timeout) {
  const net::Deadline deadline = std::chrono::steady_clock::now() + timeout;
  const net::Fd fd = net::connect_to(url.where, deadline);
  const std::string host = url.where.host.find(':') != std::string::npos
                               ? "[" + url.where.host + "]:" + url.where.port
                               : url.where.host + ":" + url.where.port;
  std::string request =
      std::string(method) + " " + path + " HTTP/1.1\r\nHost: " + host +
      "\r\nUser-Agent: boardkeeper\r\nContent-Type: " + std::string(content_type) +
      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  request += body;
  std::string where = "http://" + host;
  where += path;
  if (!net::send_all(fd.get(), request, deadline)) {
    throw Error(where + ": sending the request failed or timed out");
  }
  std::string response;
  constexpr std::size_t kMaxResponse = 1 << 16;
  while (response.size() < kMaxResponse) {
    const long n = net::receive_some(fd.get(), response, kMaxResponse - response.size(), deadline);
    if (n < 0) throw Error(where + ": no complete response in time");
    if (n == 0) break;
  }
  // HTTP/1.1 204 No Content
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12 || response[8] != ' ') {
    throw Error(where + ": the answer is not HTTP");
  }
  HttpReply reply;
  for (std::size_t i = 9; i < 12; ++i) {
    if (response[i] < '0' || response[i] > '9') {
      throw Error(where + ": the answer has no status code");
    }
    reply.status = reply.status * 10 + (response[i] - '0');
  }
  auto start = response.find("\r\n\r\n");
  if (start != std::string::npos) reply.body = response.substr(start + 4);
  return reply;
}

void push_metrics(const HttpUrl& gateway, const std::string& job, bool replace,
                  std::string_view text) {
  const std::string path = gateway.path + "/metrics/job/" + job;
  const HttpReply r = http_request(gateway, replace ? "PUT" : "POST", path, kPrometheusText, text,
                                   std::chrono::seconds{10});
  if (r.status < 200 || r.status > 299) {
    std::string body = r.body.substr(0, 200);
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    throw Error("pushgateway answered " + std::to_string(r.status) +
                (body.empty() ? "" : ": " + body));
  }
}

}  // namespace bk::cli
