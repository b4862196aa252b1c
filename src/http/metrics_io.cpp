// File and Pushgateway output of the metrics text.
#include "http/metrics_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include <httplib.h>

#include "core/error.h"
#include "core/percent.h"
#include "core/redact.h"
#include "version.h"

namespace bk::http {
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

void update_process_metrics(metrics::Registry& registry) {
  // /proc/self/stat: after the command name in parentheses, field 3 is the state; utime and
  // stime (fields 14, 15) and starttime (22) in clock ticks, vsize (23) in bytes, rss (24)
  // in pages.
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return;  // not Linux: no process metrics
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> f{"", ""};  // fields 1 and 2 skipped above; index = field - 1
  for (std::string v; fields >> v;) f.push_back(v);
  if (f.size() < 24) return;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  const double cpu = (std::stod(f[13]) + std::stod(f[14])) / ticks;
  metrics::Family& cpu_total = registry.counter("process_cpu_seconds_total",
                                                "Total user and system CPU time spent in seconds.");
  // Added even when 0 (a process that has used less than a clock tick): the series exists
  // from the first render.
  cpu_total.add(std::max(0.0, cpu - cpu_total.value()));
  registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.")
      .set(std::stod(f[23]) * page);
  registry.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
      .set(std::stod(f[22]));
  // The boot time (btime of /proc/stat) plus the start in ticks since boot.
  std::ifstream proc_stat("/proc/stat");
  for (std::string line; std::getline(proc_stat, line);) {
    if (line.rfind("btime ", 0) == 0) {
      registry
          .gauge("process_start_time_seconds",
                 "Start time of the process since unix epoch in seconds.")
          .set(std::stod(line.substr(6)) + std::stod(f[21]) / ticks);
      break;
    }
  }
  double fds = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] != '.') ++fds;
    }
    ::closedir(dir);
    fds -= 1;  // the directory stream's own
  }
  registry.gauge("process_open_fds", "Number of open file descriptors.").set(fds);
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    registry.gauge("process_max_fds", "Maximum number of open file descriptors.")
        .set(static_cast<double>(limit.rlim_cur));
  }
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
    return UsageError(std::string(flag) + ": " + why +
                      " (expected http[s]://[user:password@]host[:port][/path])");
  };
  HttpUrl out;
  out.https = url.rfind("https://", 0) == 0;
  if (!out.https && url.rfind("http://", 0) != 0) {
    throw bad("the URL must start with http:// or https://");
  }
  std::string_view rest = url.substr(out.https ? 8 : 7);
  // The user info ends at the last '@' (a password may hold '/', '?', '#' and '@').
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const auto colon = userinfo.find(':');
    auto user = percent_decode(userinfo.substr(0, colon));
    auto password = percent_decode(colon == std::string_view::npos ? std::string_view{}
                                                                   : userinfo.substr(colon + 1));
    if (!user || !password) {
      throw bad("bad percent-escape in the user or password (write '%' itself as %25)");
    }
    out.user = std::move(*user);
    out.password = std::move(*password);
    rest = rest.substr(at + 1);
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.empty()) throw bad("no host");
  if (rest.find_first_of("?#") != std::string_view::npos) throw bad("no query or fragment");
  const bool has_port = authority.front() == '[' ? authority.find("]:") != std::string_view::npos
                                                 : authority.find(':') != std::string_view::npos;
  try {
    out.where = net::parse_host_port(
        has_port ? std::string(authority) : std::string(authority) + (out.https ? ":443" : ":80"),
        flag);
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
  const std::string host = url.where.host.find(':') != std::string::npos
                               ? "[" + url.where.host + "]:" + url.where.port
                               : url.where.host + ":" + url.where.port;
  const std::string origin = (url.https ? "https://" : "http://") + host;
  // cpp-httplib: TLS through OpenSSL, the server's certificate and name verified against
  // the system's CA store (SSL_CERT_FILE and SSL_CERT_DIR work as for any OpenSSL program).
  httplib::Client client(origin);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_keep_alive(false);
  if (url.https) client.enable_server_certificate_verification(true);
  if (!url.user.empty() || !url.password.empty()) client.set_basic_auth(url.user, url.password);
  const httplib::Headers headers{{"User-Agent", "boardkeeper"}};
  const std::string type(content_type);
  const httplib::Result result = method == "PUT"
                                     ? client.Put(path, headers, body.data(), body.size(), type)
                                     : client.Post(path, headers, body.data(), body.size(), type);
  if (!result) {
    std::string why = httplib::to_string(result.error());
    if (url.https && result.error() == httplib::Error::SSLServerVerification) {
      why += " (the server's certificate: is its CA in the system store, or SSL_CERT_FILE?)";
    }
    throw Error(origin + path + ": " + why);
  }
  return HttpReply{result->status, result->body};
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

}  // namespace bk::http
