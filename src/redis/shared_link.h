// One Redis connection shared by many threads (serve's workers), pipelined: a call's commands
// are written as soon as the reply being read has come in, however many calls are still
// waiting for theirs, and Redis answers everything in the order it was written.
//
// No thread of its own: the first caller to find the link idle leads. Until its own replies
// are in, it writes whatever calls queued meanwhile (in one write) and reads the next reply,
// handing each call its replies as they complete; then it passes the lead to the first caller
// still waiting, which was about to be woken anyway. A caller alone on the link does its own
// I/O, as on a Connection of its own.
//
// Each call's commands stay together and in order, so a call's pipeline means what it means
// on a Connection of its own (MULTI ... EXEC included); an error reply answers only the call
// that sent the command. A connection that fails (I/O, no answer within
// options.command_timeout) fails the calls whose commands were at the server; the next
// leader reconnects (options.shuns keeps a frozen server from being tried by every one).
// A caller waits at most options.command_timeout for its replies (TimeoutError), its turn as
// leader included, unless the server stops answering during one of that turn's reads (which
// then ends by the connection's own timeout: one more command_timeout at worst). It leaves
// the queue unsent when it gives up, and when nobody waits
// for the replies still due, the connection is made again rather than read. A failure keeps
// its class (TimeoutError, ClosedError, ReplyError of a refused handshake, ...) for each
// caller it fails.
//
// A single server only (not options.cluster): a cluster's connection routes by slot.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "redis/connection.h"

namespace bk::redis {

class SharedLink {
 public:
  // Connects at the first call. Throws std::invalid_argument with options.cluster.
  explicit SharedLink(const Options& options);
  ~SharedLink();
  SharedLink(const SharedLink&) = delete;
  SharedLink& operator=(const SharedLink&) = delete;

  // Sends `commands` in the next round trip and returns their replies, in order (an error
  // reply is returned, as Connection::pipeline does). Throws ConnectionError (TimeoutError
  // for a server that did not answer) when they did not get their replies. Thread-safe.
  std::vector<Reply> call(const std::vector<Args>& commands);

  // How many times the connection was made (Connection::generation).
  std::uint64_t generation() const;
  // Calls made, and the writes that carried their commands to the server: calls / writes is
  // how many calls shared a write on average (a call alone: one write, one round trip).
  struct Stats {
    std::uint64_t calls = 0;
    std::uint64_t writes = 0;
    std::uint64_t deepest = 0;  // the most calls at the server at once (pipelined)
  };
  Stats stats() const;
  const Options& options() const { return options_; }

 private:
  struct Call;
  // The class of the error that failed a call's commands: each caller gets an exception of
  // its own of that class (an exception object is not shared between threads).
  enum class Failed { none, timeout, closed, proto, connection, reply };
  static Failed class_of(const std::exception& e);
  [[noreturn]] static void rethrow(Failed failed, const std::string& what);

  const Options options_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<Call>> queue_;  // not written yet
  bool leading_ = false;                     // a caller is doing the I/O
  Stats stats_;
  std::uint64_t generation_ = 0;
  // The leader's alone (one leader at a time; the lead passes under mu_):
  Connection conn_;
  std::deque<std::shared_ptr<Call>> in_flight_;  // written, in order, replies still due
  bool stale_ = false;  // the connection is made again before the next write

  // The leader's turn, until `mine` is answered or its deadline passes (lock held on entry
  // and exit; TimeoutError after passing the lead on).
  void lead(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Call>& mine,
            std::chrono::steady_clock::time_point deadline);
  // The calls below: lock held.
  void pass_lead();
  void leave(Call& me);                 // gives up: out of the queue, its replies unawaited
  [[noreturn]] void timed_out() const;  // TimeoutError
  static void finish(Call& c, Failed failed, const std::string& failure);
  // Without the lock: writes `fresh` (now in flight); reads the next reply due, returning the
  // call it completed. Both throw when the connection failed.
  void write(const std::deque<std::shared_ptr<Call>>& fresh);
  std::shared_ptr<Call> read_one();
};

}  // namespace bk::redis
