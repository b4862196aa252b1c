// The HTTP server's connection-free parts (cli/http_parts.h).
#include "cli/http_parts.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>

#include "core/json.h"

namespace bk::cli::http_parts {

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

void WorkerPool::start(std::size_t threads) {
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
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

}  // namespace bk::cli::http_parts
