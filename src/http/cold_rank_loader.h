// serve's loader of cold ranks into memory (service/cold_index.h).
#pragma once
#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "cold/call_deadline.h"
#include "core/redact.h"
#include "http/sessions.h"

namespace bk::http {

// Cold ranks from memory (service/cold_index.h): one thread loads the indexes that reads ask
// for, on a session of its own, each load bounded by kLoadDeadline, so a slow or hung
// PostgreSQL costs the loader, never a read (reads ask PostgreSQL meanwhile).
class ColdRankLoader {
 public:
  static constexpr std::chrono::seconds kLoadDeadline{60};

  explicit ColdRankLoader(Sessions& sessions) : sessions_(sessions) {
    if (sessions_.cold_ranks()) thread_ = std::thread([this] { run(); });
  }
  ~ColdRankLoader() {
    if (!thread_.joinable()) return;
    request_stop();
    cold::cut_every_call();  // a load waiting on PostgreSQL ends now
    thread_.join();
  }
  ColdRankLoader(const ColdRankLoader&) = delete;
  ColdRankLoader& operator=(const ColdRankLoader&) = delete;

  // Takes no new load; the one in progress goes on (cold::cut_every_call ends its waits).
  void request_stop() {
    if (sessions_.cold_ranks()) sessions_.cold_ranks()->stop();
  }
  // Whether the thread has ended by `limit` (true without one).
  bool ended_by(std::chrono::steady_clock::time_point limit) {
    return !thread_.joinable() || ended_.wait_until(limit) == std::future_status::ready;
  }

 private:
  Sessions& sessions_;
  std::promise<void> end_;
  std::future<void> ended_ = end_.get_future();
  std::thread thread_;

  void run() {
    std::unique_ptr<Session> s;
    service::ColdIndexes& cache = *sessions_.cold_ranks();
    while (!cache.stopped()) {
      const auto ref = cache.next(std::chrono::seconds(1));
      if (ref) load(s, *ref);
    }
    end_.set_value();
  }
  void load(std::unique_ptr<Session>& s, const service::PeriodRef& ref) {
    const auto started = std::chrono::steady_clock::now();
    const cold::CallDeadline bounded(started + kLoadDeadline);
    try {
      if (!s) s = sessions_.fresh(api::Lane::postgres).session;
      s->ready();
      if (s->boards.reads().load_cold_ranks(ref)) {
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
        spdlog::debug("serve: cold ranks of {} {} {} in memory ({:.3f} s)", ref.board,
                      ref.spec->name, ref.period.id, took.count());
      }
    } catch (const std::exception& e) {
      spdlog::warn("serve: cold ranks of {} {} {} not loaded (reads ask PostgreSQL): {}", ref.board,
                   ref.spec->name, ref.period.id, redact(e.what()));
      s.reset();  // its connections' state is unknown
    }
  }
};

}  // namespace bk::http
