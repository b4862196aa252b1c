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
  std::string failure;           // why its commands got no replies ("" when they did)
  bool hung = false;             // ... because the server did not answer in time
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
    lead(lock, *me);
  }
  while (!me->done) {
    if (me->lead) {
      me->lead = false;
      lead(lock, *me);
      continue;
    }
    if (me->wake.wait_until(lock, deadline) == std::cv_status::timeout && !me->done && !me->lead) {
      // Still queued: it leaves unsent. At the server: its replies are read and dropped.
      const auto queued = std::find(queue_.begin(), queue_.end(), me);
      if (queued != queue_.end()) queue_.erase(queued);
      me->abandoned = true;
      throw TimeoutError("redis " + endpoint(options_) + ": no reply within " +
                         std::to_string(options_.command_timeout.count()) + " ms");
    }
  }
  if (me->failure.empty()) return std::move(me->replies);
  if (me->hung) throw TimeoutError(me->failure);
  throw ConnectionError(me->failure);
}

void SharedLink::lead(std::unique_lock<std::mutex>& lock, const Call& mine) {
  while (!mine.done) {
    std::vector<std::shared_ptr<Call>> fresh(queue_.begin(), queue_.end());
    queue_.clear();
    if (!fresh.empty()) ++stats_.writes;
    lock.unlock();
    std::string failure;
    bool hung = false;
    std::shared_ptr<Call> answered;
    try {
      if (!fresh.empty()) write(fresh);
      answered = read_one();
    } catch (const Error& e) {
      failure = e.what();
      hung = e.hung();
    } catch (const std::exception& e) {
      failure = std::string("redis: ") + e.what();
    }
    lock.lock();
    generation_ = conn_.generation();
    stats_.deepest =
        std::max<std::uint64_t>(stats_.deepest, in_flight_.size() + (answered ? 1 : 0));
    if (!failure.empty()) {
      for (const auto& c : in_flight_) {
        c->failure = failure;
        c->hung = hung;
        c->done = true;
        c->wake.notify_one();
      }
      in_flight_.clear();
    } else if (answered) {
      answered->done = true;
      answered->wake.notify_one();
    }
  }
  pass_lead();
}

void SharedLink::pass_lead() {
  // To the first caller still waiting, which was about to be woken anyway; replies of
  // callers who gave up are read by whoever leads next.
  for (const auto& c : in_flight_) {
    if (!c->abandoned) {
      c->lead = true;
      c->wake.notify_one();
      return;
    }
  }
  if (!queue_.empty()) {
    queue_.front()->lead = true;
    queue_.front()->wake.notify_one();
    return;
  }
  leading_ = false;
}

void SharedLink::write(const std::vector<std::shared_ptr<Call>>& fresh) {
  std::vector<Args> all;
  for (const auto& c : fresh) {
    in_flight_.push_back(c);  // a failure from here on fails them with the rest
    for (Args& a : c->commands) all.push_back(std::move(a));
    c->commands.clear();
  }
  // A connection that failed has nothing at the server any more (its calls failed with it).
  if (!conn_.connected()) conn_.reconnect();
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
