// serve's /readyz: a prober with connections of its own checks Redis (PING) and PostgreSQL
// (SELECT 1) about once a second, each check bounded by a short timeout, so that the probe
// is answered at once from the last results and never waits on a backend. A backend that
// refuses is "unreachable"; one that takes the check but does not answer it in time "hung".
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "redis/url.h"

namespace bk::http {

class Readiness {
 public:
  enum class State { unknown, ok, unreachable, hung };

  // `postgres_conninfo`: libpq's connection string (cold::parse_conninfo), password included;
  // `replica_conninfo` likewise for postgres.read_url (empty: none).
  Readiness(const redis::Options& redis, std::string postgres_conninfo,
            std::string replica_conninfo = "");
  ~Readiness();  // stops the prober (and waits for its round to end)
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // One round of checks on the caller's thread (before serving: the first answers are known).
  void check_now();
  // Checks in the background, every `period`, until destroyed.
  void start(std::chrono::milliseconds period = std::chrono::seconds{1});
  // Tells the prober to stop after the check it is making, without waiting for it: called
  // before the server stops, so that the two wind down side by side.
  void request_stop();

  // Ready while Redis answers: nearly every read needs it (an archived period's needs only
  // PostgreSQL, so PostgreSQL being down or hung is said but does not take serve out of
  // service: the reads it would hold end at their deadline).
  bool ready() const { return redis_.load() == State::ok; }
  State redis() const { return redis_.load(); }
  State postgres() const { return postgres_.load(); }
  // The replica's state (unknown without one) and WAL bytes it has not replayed (-1: unknown).
  State replica() const { return replica_.load(); }
  std::int64_t replica_lag_bytes() const { return replica_lag_.load(); }
  // {"ready":true,"redis":"ok","postgres":"hung"}, and with a replica
  // "postgres_replica":"ok","postgres_replica_lag_bytes":0 (the replica never makes it unready:
  // reads go to the primary without it).
  std::string json() const;

 private:
  struct Probes;  // the connections (prober thread only)
  std::unique_ptr<Probes> probes_;
  std::atomic<State> redis_{State::unknown};
  std::atomic<State> postgres_{State::unknown};
  std::atomic<State> replica_{State::unknown};
  std::atomic<std::int64_t> replica_lag_{-1};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;

  void record(std::atomic<State>& state, const char* backend, State now, const std::string& why);
};

}  // namespace bk::http
