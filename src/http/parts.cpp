// The HTTP server's connection-free parts (http/parts.h).
#include "http/parts.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <ostream>  // before Beast's status.hpp, which needs it

#include <boost/beast/http/status.hpp>

#include "core/json.h"

namespace bk::http::parts {
namespace {

// The elements of a comma-separated header value, without the spaces around them; empty
// elements skipped (RFC 9110 5.6.1).
std::vector<std::string_view> split_list(std::string_view value) {
  std::vector<std::string_view> out;
  while (!value.empty()) {
    const std::size_t comma = std::min(value.find(','), value.size());
    std::string_view e = value.substr(0, comma);
    const auto first = e.find_first_not_of(" \t");
    if (first != std::string_view::npos)
      out.push_back(e.substr(first, e.find_last_not_of(" \t") + 1 - first));
    value.remove_prefix(std::min(comma + 1, value.size()));
  }
  return out;
}

}  // namespace

void block_signals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

const std::string& http_date() {
  thread_local std::time_t cached_at = 0;
  thread_local std::string text;
  const std::time_t now = std::time(nullptr);
  if (now != cached_at) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    text.assign(buf, std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm));
    cached_at = now;
  }
  return text;
}

HttpServer::Response json_error(int status, const std::string& message) {
  HttpServer::Response r;
  r.status = status;
  r.body = JsonLine().str("error", message).done() + "\n";
  return r;
}

std::string seconds_text(std::chrono::milliseconds d) {
  const auto tenths = d.count() / 100;
  return std::to_string(tenths / 10) + (tenths % 10 != 0 ? "." + std::to_string(tenths % 10) : "");
}

bool header_safe(const std::string& s) {
  return s.find_first_of("\r\n") == std::string::npos;
}

Refusal line_too_long(std::size_t max) {
  return {414, "the request line is longer than " + std::to_string(max) + " bytes"};
}

Refusal head_too_large(std::size_t max) {
  return {431, "the request headers are larger than " + std::to_string(max) + " bytes"};
}

Refusal body_too_large(std::size_t max) {
  return {413, "the request body is larger than " + std::to_string(max) + " bytes"};
}

Refusal share_refusal(Admission::Verdict verdict, std::size_t body_bytes,
                      const Admission::Limits& limits) {
  const std::vector<std::pair<std::string, std::string>> retry{{"Retry-After", "1"}};
  const std::string bytes = std::to_string(body_bytes) + " bytes";
  switch (verdict) {
    case Admission::Verdict::too_large:
      return {413, "the request body (" + bytes + ") is more than a client may have in flight (" +
                       std::to_string(std::min(limits.body_bytes, limits.body_bytes_per_key)) +
                       " bytes)"};
    case Admission::Verdict::server_full:
      return {503,
              "the server holds as many request bodies as it takes (" +
                  std::to_string(limits.body_bytes) + " bytes); try again shortly",
              retry};
    case Admission::Verdict::key_bodies:
      return {429,
              "this client's requests in progress hold its share of request bodies (" +
                  std::to_string(limits.body_bytes_per_key) + " bytes); try again shortly",
              retry};
    case Admission::Verdict::key_requests:
      return {429,
              "this client has " + std::to_string(limits.requests_per_key) +
                  " requests in progress, its share; try again when one is answered",
              retry};
    case Admission::Verdict::admitted:
      break;
  }
  return {500, "internal error: an admitted request refused"};
}

int transfer_coding_status(const std::vector<std::string_view>& values, unsigned version,
                           bool parsed_chunked) {
  if (version < 11) return 400;
  std::vector<std::string_view> codings;
  for (const std::string_view v : values) {
    for (std::string_view c : split_list(v)) codings.push_back(c);
  }
  const auto chunked = [](std::string_view c) {
    return c.size() == 7 && std::equal(c.begin(), c.end(), "chunked", [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  };
  if (codings.empty() || !chunked(codings.back())) return 400;
  if (codings.size() > 1) return 501;
  return parsed_chunked ? 0 : 400;
}

std::optional<Refusal> transfer_coding_refusal(const std::vector<std::string_view>& values,
                                               unsigned version, bool parsed_chunked) {
  const int status = values.empty() ? 0 : transfer_coding_status(values, version, parsed_chunked);
  if (status == 0) return std::nullopt;
  return Refusal{status, status == 501 ? "the only transfer coding accepted is chunked, alone"
                                       : "the only transfer coding accepted is chunked (HTTP/1.1)"};
}

bool line_ends_within(std::string_view buffered, std::size_t max_line) {
  return buffered.substr(0, max_line + 2).find("\r\n") != std::string_view::npos;
}

bool origin_allowed(const HttpServer::Options& options, const std::string& origin) {
  const auto& list = options.cors_origins;
  return !origin.empty() && std::any_of(list.begin(), list.end(), [&](const std::string& o) {
    return o == "*" || o == origin;
  });
}

std::string serialize(const HttpServer::Response& r, const Exchange& x, bool close,
                      const HttpServer::Options& options) {
  std::string out;
  out.reserve(r.body.size() + 256);
  const auto status = static_cast<boost::beast::http::status>(r.status);
  out += "HTTP/1.1 " + std::to_string(r.status) + " " +
         std::string(boost::beast::http::obsolete_reason(status)) + "\r\nDate: " + http_date() +
         "\r\n";
  const bool no_body = r.status == 204 || r.status == 304;
  if (!no_body) {
    out += "Content-Type: " + r.content_type +
           "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
  }
  // Every answer: a browser never takes a body for another type than the one named.
  out += "X-Content-Type-Options: nosniff\r\n";
  const bool cache = r.cacheable && x.read && r.status == 200 && options.cache_max_age.count() > 0;
  out += cache ? "Cache-Control: max-age=" + std::to_string(options.cache_max_age.count()) + "\r\n"
               : std::string("Cache-Control: no-store\r\n");
  if (close) {
    out += "Connection: close\r\n";
  } else if (x.version == 10) {
    out += "Connection: keep-alive\r\n";
  }
  if (origin_allowed(options, x.origin)) {
    out += "Access-Control-Allow-Origin: " + x.origin + "\r\nVary: Origin\r\n";
  }
  for (const auto& [name, value] : r.headers) {
    if (header_safe(name) && header_safe(value))
      out.append(name).append(": ").append(value) += "\r\n";
  }
  out += "\r\n";
  if (!x.head && !no_body) out += r.body;
  return out;
}

HttpServer::Response options_answer(const Exchange& x, const HttpServer::Options& options,
                                    const std::string& allow) {
  constexpr std::string_view kPreflightMaxAge = "600";  // seconds a browser keeps a preflight
  HttpServer::Response r;
  r.status = 204;
  if (x.origin.empty()) {
    r.headers = {{"Allow", allow}};
    return r;
  }
  if (!origin_allowed(options, x.origin)) {
    return json_error(403, "this origin may not read here (serve.cors_origins does not list it)");
  }
  r.headers = {{"Access-Control-Allow-Methods", options.post ? "GET, HEAD, POST" : "GET, HEAD"},
               {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
               {"Access-Control-Max-Age", std::string(kPreflightMaxAge)},
               {"Allow", allow}};
  return r;
}

void WorkerPool::start(std::size_t threads, int nice) {
  for (std::size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, nice] {
      // `nice` more than the process's (at most 19): best effort, a thread that cannot lower
      // its priority runs as the others.
      if (nice > 0) {
        const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
        setpriority(PRIO_PROCESS, tid, std::min(getpriority(PRIO_PROCESS, tid) + nice, 19));
      }
      run();
    });
  }
}

std::vector<std::unique_ptr<WorkerPool>> start_pools(const std::vector<std::size_t>& sizes,
                                                     const std::vector<int>& nice) {
  std::vector<std::unique_ptr<WorkerPool>> pools;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    pools.push_back(std::make_unique<WorkerPool>());
    pools.back()->start(std::max<std::size_t>(1, sizes[i]), i < nice.size() ? nice[i] : 0);
  }
  return pools;
}

void WorkerPool::submit(std::function<void()> task) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void WorkerPool::finish() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    finishing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::run() {
  block_signals();
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return finishing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace bk::http::parts
