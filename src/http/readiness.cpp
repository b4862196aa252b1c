// The readiness prober: a Redis connection and a libpq connection of its own, used only by
// its thread. A check that fails on a connection that was up is tried once more on a fresh
// one (a backend restart kills idle connections; that alone is no outage).
#include "http/readiness.h"

#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdint>
#include <optional>

#include "core/error.h"
#include "core/json.h"
#include "core/redact.h"
#include "redis/connection.h"
#include "redis/ping.h"

namespace bk::http {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

constexpr std::chrono::milliseconds kCheckTimeout{1000};  // per check, connecting included

const char* state_name(Readiness::State s) {
  switch (s) {
    case Readiness::State::ok:
      return "ok";
    case Readiness::State::unreachable:
      return "unreachable";
    case Readiness::State::hung:
      return "hung";
    case Readiness::State::unknown:
      break;
  }
  return "unknown";
}

// Waits until `fd` is readable (or writable); false when the deadline passed first.
bool wait_socket(int fd, bool write, SteadyTime deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

struct PgFinish {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct PgClear {
  void operator()(PGresult* r) const { PQclear(r); }
};

using State = Readiness::State;

// One query (SELECT 1 unless told) over a libpq connection kept between checks, every step
// non-blocking and bounded; value() is the first field of its answer.
class PostgresProbe {
 public:
  explicit PostgresProbe(std::string conninfo, std::string query = "SELECT 1")
      : conninfo_(std::move(conninfo)), query_(std::move(query)) {}

  const std::string& value() const { return value_; }

  // ok, unreachable or hung; `why` says what failed.
  State check(std::string& why) {
    value_.clear();  // a failed check knows no value
    const auto deadline = std::chrono::steady_clock::now() + kCheckTimeout;
    const bool was_up = conn_ != nullptr;
    hung_ = false;
    if (was_up && select_one(deadline, why)) return State::ok;
    conn_.reset();
    if (was_up && !hung_) why.clear();  // a connection that died while idle: try a fresh one
    if (!hung_ && connect(deadline, why) && select_one(deadline, why)) return State::ok;
    return hung_ ? State::hung : State::unreachable;
  }

 private:
  std::string conninfo_;
  std::string query_;
  std::string value_;  // of the last answer (empty when NULL)
  std::unique_ptr<PGconn, PgFinish> conn_;
  bool hung_ = false;  // the last failure was a wait that ran out, not a refusal

  bool no_answer(std::string& why, const std::string& what) {
    hung_ = true;
    return fail(why, what);
  }
  bool fail(std::string& why, const std::string& what) {
    std::string message = PQerrorMessage(conn_.get());
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    why = what + ": " + redact(message);
    conn_.reset();
    return false;
  }
  bool connect(SteadyTime deadline, std::string& why) {
    conn_.reset(PQconnectStart(conninfo_.c_str()));
    if (!conn_ || PQstatus(conn_.get()) == CONNECTION_BAD) return fail(why, "cannot connect");
    for (PostgresPollingStatusType s = PGRES_POLLING_WRITING; s != PGRES_POLLING_OK;) {
      if (s == PGRES_POLLING_FAILED) return fail(why, "cannot connect");
      if (!wait_socket(PQsocket(conn_.get()), s == PGRES_POLLING_WRITING, deadline)) {
        return no_answer(why, "no connection within 1 s");
      }
      s = PQconnectPoll(conn_.get());
    }
    return PQsetnonblocking(conn_.get(), 1) == 0 || fail(why, "cannot connect");
  }
  bool select_one(SteadyTime deadline, std::string& why) {
    PGconn* c = conn_.get();
    if (PQsendQuery(c, query_.c_str()) == 0) return fail(why, "cannot send a query");
    for (int flushed = PQflush(c); flushed != 0; flushed = PQflush(c)) {
      if (flushed < 0) return fail(why, "cannot send a query");
      if (!wait_socket(PQsocket(c), true, deadline)) {
        return no_answer(why, "cannot send a query within 1 s");
      }
    }
    bool ok = false;
    for (;;) {
      while (PQisBusy(c) != 0) {
        if (!wait_socket(PQsocket(c), false, deadline)) {
          return no_answer(why, "no answer within 1 s");
        }
        if (PQconsumeInput(c) == 0) return fail(why, "the connection broke");
      }
      const std::unique_ptr<PGresult, PgClear> r(PQgetResult(c));
      if (!r) break;
      ok = PQresultStatus(r.get()) == PGRES_TUPLES_OK;
      if (ok) value_ = PQntuples(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
    }
    return ok || fail(why, query_ + " failed");
  }
};

redis::Options probe_options(redis::Options o) {
  o.connect_timeout = kCheckTimeout;
  o.command_timeout = kCheckTimeout;
  o.role = "readyz";
  return o;
}

// PING over a connection kept between checks.
class RedisProbe {
 public:
  explicit RedisProbe(const redis::Options& options)
      : conn_(probe_options(options), redis::Connect::later) {}

  // ok, unreachable or hung; `why` says what failed.
  State check(std::string& why) {
    const bool was_up = conn_.connected();
    State s = ping(why);
    // It died while idle: once more, on a fresh connection (not when it took the PING and
    // did not answer: that check has had its time).
    if (s == State::unreachable && was_up) s = ping(why);
    return s;
  }

 private:
  redis::Connection conn_;

  State ping(std::string& why) {
    try {
      if (!conn_.connected()) conn_.reconnect();
      const auto refused = redis::ping(conn_);
      if (!refused) return State::ok;
      why = "PING answered " + *refused;
    } catch (const Error& e) {
      why = e.what();
      if (e.hung()) return State::hung;
    }
    return State::unreachable;
  }
};

}  // namespace

// A WAL position ("16/B374D848") as a number; nullopt when it is not one.
std::optional<std::uint64_t> wal_bytes(const std::string& lsn) {
  const auto slash = lsn.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == lsn.size()) return std::nullopt;
  try {
    return (std::stoull(lsn.substr(0, slash), nullptr, 16) << 32) |
           std::stoull(lsn.substr(slash + 1), nullptr, 16);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct Readiness::Probes {
  RedisProbe redis;
  PostgresProbe postgres;
  std::unique_ptr<PostgresProbe> replica;  // with postgres.read_url
};

Readiness::Readiness(const redis::Options& redis, std::string postgres_conninfo,
                     std::string replica_conninfo)
    : probes_(std::make_unique<Probes>(Probes{
          RedisProbe(redis),
          // With a replica, the primary's check tells where its WAL is (for the lag).
          PostgresProbe(std::move(postgres_conninfo), replica_conninfo.empty()
                                                          ? "SELECT 1"
                                                          : "SELECT pg_current_wal_lsn()::text"),
          nullptr})) {
  if (!replica_conninfo.empty()) {
    probes_->replica = std::make_unique<PostgresProbe>(std::move(replica_conninfo),
                                                       "SELECT pg_last_wal_replay_lsn()::text");
    replica_.store(State::unknown);
  }
}

Readiness::~Readiness() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void Readiness::request_stop() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void Readiness::check_now() {
  std::string why;
  record(redis_, "redis", probes_->redis.check(why), why);
  why.clear();
  record(postgres_, "postgresql", probes_->postgres.check(why), why);
  if (!probes_->replica) return;
  why.clear();
  State replica = probes_->replica->check(why);
  const auto primary_at = wal_bytes(probes_->postgres.value());
  const auto replica_at = wal_bytes(probes_->replica->value());
  if (replica == State::ok && !replica_at) {
    replica = State::unreachable;
    why = "it is not a standby (pg_last_wal_replay_lsn() is NULL): reads go to the primary";
  }
  // Only from two answers of this round: else unknown (-1), not an old figure.
  replica_lag_.store(!primary_at || !replica_at ? -1
                     : *primary_at > *replica_at
                         ? static_cast<std::int64_t>(*primary_at - *replica_at)
                         : 0);
  record(replica_, "the postgresql replica", replica, why);
}

void Readiness::start(std::chrono::milliseconds period) {
  thread_ = std::thread([this, period] {
    // SIGTERM and SIGINT are the main thread's; a signal here would only cut a check short.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      check_now();
      lock.lock();
    }
  });
}

// The new state; a change is logged once (the reason redacted: it may quote a URL).
void Readiness::record(std::atomic<State>& state, const char* backend, State now,
                       const std::string& why) {
  const State before = state.exchange(now);
  if (before == now) return;
  if (now == State::ok) {
    if (before != State::unknown) spdlog::info("serve: {} answers again", backend);
  } else {
    spdlog::warn("serve: {} is {}: {}", backend,
                 now == State::hung ? "hung (no answer in time)" : "not reachable", redact(why));
  }
}

std::string Readiness::json() const {
  JsonLine out;
  out.flag("ready", ready())
      .str("redis", state_name(redis_.load()))
      .str("postgres", state_name(postgres_.load()));
  if (probes_->replica) {
    out.str("postgres_replica", state_name(replica_.load()));
    if (replica_lag_.load() >= 0) out.num("postgres_replica_lag_bytes", replica_lag_.load());
  }
  return out.done();
}

}  // namespace bk::http
