// The shared link's queue, what is at the server, and the leader (redis/shared_link.h).
#include "redis/shared_link.h"

#include <algorithm>
#include <stdexcept>

#include "redis/error.h"

namespace bk::redis {

// One caller's commands, queued, sent, then answered or failed. Guarded by the link's mutex.
struct SharedLink::Call {
  std::vector<Args> commands;  // a copy: a caller that gives up returns while they are sent
  std::size_t count = 0;       // how many (commands is emptied once they are written)
  std::vector<Reply> replies;
  bool done = false;
  bool lead = false;             // the lead was passed to this caller
  bool abandoned = false;        // its caller gave up waiting
  Failed failed = Failed::none;  // why its commands got no replies
  std::string failure;           // ... in words
  std::condition_variable wake;  // done or lead
};

SharedLink::SharedLink(const Options& options) : options_(options), conn_(options, Connect::later) {
  if (options.cluster) throw std::invalid_argument("redis: a shared link speaks to one server");
}

SharedLink::~SharedLink() = default;

std::uint64_t SharedLink::generation() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

SharedLink::Stats SharedLink::stats() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

SharedLink::Failed SharedLink::class_of(const std::exception& e) {
  if (dynamic_cast<const TimeoutError*>(&e) != nullptr) return Failed::timeout;
  if (dynamic_cast<const ClosedError*>(&e) != nullptr) return Failed::closed;
  if (dynamic_cast<const ProtoError*>(&e) != nullptr) return Failed::proto;
  if (dynamic_cast<const ReplyError*>(&e) != nullptr) return Failed::reply;  // a lasting refusal
  return Failed::connection;
}

void SharedLink::rethrow(Failed failed, const std::string& what) {
  switch (failed) {
    case Failed::timeout:
      throw TimeoutError(what);
    case Failed::closed:
      throw ClosedError(what);
    case Failed::proto:
      throw ProtoError(what);
    case Failed::reply:
      throw ReplyError(what);
    default:
      throw ConnectionError(what);
  }
}

std::vector<Reply> SharedLink::call(const std::vector<Args>& commands) {
  check_command_lengths(commands);  // one caller's bad command never fails the others'
  if (commands.empty()) return {};
  auto me = std::make_shared<Call>();
  me->commands = commands;
  me->count = commands.size();
  const auto deadline = std::chrono::steady_clock::now() + options_.command_timeout;
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(me);
  ++stats_.calls;
  if (!leading_) {
    leading_ = true;
    lead(lock, me, deadline);
  }
  while (!me->done) {
    if (me->lead) {
      me->lead = false;
      lead(lock, me, deadline);
      continue;
    }
    if (me->wake.wait_until(lock, deadline) == std::cv_status::timeout && !me->done && !me->lead) {
      leave(*me);
      timed_out();
    }
  }
  if (me->failed == Failed::none) return std::move(me->replies);
  rethrow(me->failed, me->failure);
}

void SharedLink::leave(Call& me) {
  // Still queued: it leaves unsent. At the server: its replies are read and dropped (or the
  // connection is made again when nobody waits for any reply due).
  const auto queued = std::find_if(queue_.begin(), queue_.end(),
                                   [&](const std::shared_ptr<Call>& c) { return c.get() == &me; });
  if (queued != queue_.end()) queue_.erase(queued);
  me.abandoned = true;
}

void SharedLink::timed_out() const {
  throw TimeoutError("redis " + endpoint(options_) + ": no reply within " +
                     std::to_string(options_.command_timeout.count()) + " ms");
}

void SharedLink::lead(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Call>& mine,
                      std::chrono::steady_clock::time_point deadline) {
  while (!mine->done) {
    if (std::chrono::steady_clock::now() >= deadline) {
      leave(*mine);
      pass_lead();  // another caller reads on
      timed_out();
    }
    std::deque<std::shared_ptr<Call>> fresh;
    fresh.swap(queue_);
    if (!fresh.empty()) ++stats_.writes;
    lock.unlock();
    Failed failed = Failed::none;
    std::string failure;
    std::shared_ptr<Call> answered;
    try {
      if (!fresh.empty()) write(fresh);
      answered = read_one();
    } catch (const std::exception& e) {
      failed = class_of(e);
      failure = e.what();
    }
    lock.lock();
    generation_ = conn_.generation();
    stats_.deepest =
        std::max<std::uint64_t>(stats_.deepest, in_flight_.size() + (answered ? 1 : 0));
    if (failed != Failed::none) {
      // Whatever was due on this connection is lost with it: the next write reconnects.
      stale_ = true;
      in_flight_.insert(in_flight_.end(), fresh.begin(), fresh.end());  // not yet written
      for (const auto& c : in_flight_) finish(*c, failed, failure);
      in_flight_.clear();
    } else if (answered) {
      finish(*answered, Failed::none, "");
    }
  }
  pass_lead();
}

void SharedLink::finish(Call& c, Failed failed, const std::string& failure) {
  if (c.done) return;
  if (failed != Failed::none) {
    c.failed = failed;
    c.failure = failure;
    c.replies.clear();
  }
  c.done = true;
  c.wake.notify_one();
}

void SharedLink::pass_lead() {
  // To the first caller still waiting, which was about to be woken anyway.
  for (const auto& c : in_flight_) {
    if (!c->abandoned && !c->done) {
      c->lead = true;
      c->wake.notify_one();
      return;
    }
  }
  if (!in_flight_.empty()) {
    // Nobody waits for a reply still due: rather than reading them, the next write
    // reconnects.
    in_flight_.clear();
    stale_ = true;
  }
  if (!queue_.empty()) {
    queue_.front()->lead = true;
    queue_.front()->wake.notify_one();
    return;
  }
  leading_ = false;
}

void SharedLink::write(const std::deque<std::shared_ptr<Call>>& fresh) {
  // A connection that failed, or whose due replies nobody awaits, is made again first.
  if (stale_ || !conn_.connected()) {
    stale_ = false;
    conn_.reconnect();
  }
  std::vector<Args> all;
  for (const auto& c : fresh) {
    for (Args& a : c->commands) all.push_back(std::move(a));
  }
  in_flight_.insert(in_flight_.end(), fresh.begin(), fresh.end());
  for (const auto& c : fresh) c->commands.clear();
  conn_.send(all);
}

std::shared_ptr<SharedLink::Call> SharedLink::read_one() {
  if (in_flight_.empty()) return nullptr;
  Call& front = *in_flight_.front();
  front.replies.push_back(conn_.receive());
  if (front.replies.size() < front.count) return nullptr;
  auto answered = in_flight_.front();
  in_flight_.pop_front();
  return answered;
}

}  // namespace bk::redis
