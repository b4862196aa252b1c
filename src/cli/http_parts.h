// The HTTP server's parts that need no connection (cli/http_server.cpp): the worker pool
// that runs handlers, and the small texts every answer carries (date, JSON error, seconds).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/http_server.h"

namespace bk::cli::http_parts {

// Blocks every signal in the calling thread: signals (SIGTERM, SIGINT) belong to the main
// thread, which stops the server.
void block_signals();

// The IMF-fixdate of now ("Sun, 06 Nov 1994 08:49:37 GMT"), made once a second per thread.
const std::string& http_date();

// {"error": message} with the status.
HttpServer::Response json_error(int status, const std::string& message);

// Whole seconds, with tenths when there are any: "4", "0.5", "1.2".
std::string seconds_text(std::chrono::milliseconds d);

// No CR or LF: the text may go into a header line.
bool header_safe(const std::string& s);

// A fixed set of threads running tasks in the order given; finish() runs what is queued.
class WorkerPool {
 public:
  void start(std::size_t threads);
  void submit(std::function<void()> task);
  void finish();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool finishing_ = false;
  std::vector<std::thread> threads_;

  void run();
};

}  // namespace bk::cli::http_parts
