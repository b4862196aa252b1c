// hiredis 0.14 wrapped: every context is owned the moment it exists, every reply is copied
// into a Reply and freed at once, and every context error becomes one exception type.
#include "redis/connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "redis/error.h"

namespace bk::redis {
namespace {

timeval to_timeval(Millis ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

Reply convert(const redisReply& r) {
  Reply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::string;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::status;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::error;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::integer;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      out.elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
      break;
    default:
      out.type = Reply::Type::nil;
  }
  return out;
}

std::string endpoint(const Options& o) {
  return o.unix_path.empty() ? o.host + ":" + std::to_string(o.port) : o.unix_path;
}

}  // namespace

void Connection::Free::operator()(redisContext* c) const {
  redisFree(c);
}

Connection::Connection(const Options& options) : options_(options) {
  const timeval connect_tv = to_timeval(options.connect_timeout);
  redisContext* raw = options.unix_path.empty()
                          ? redisConnectWithTimeout(options.host.c_str(), options.port, connect_tv)
                          : redisConnectUnixWithTimeout(options.unix_path.c_str(), connect_tv);
  if (raw == nullptr)
    throw ConnectionError("redis: out of memory connecting to " + endpoint(options));
  ctx_.reset(raw);
  if (ctx_->err != 0) {
    throw ConnectionError("redis: cannot connect to " + endpoint(options) + ": " + ctx_->errstr);
  }
  if (redisSetTimeout(ctx_.get(), to_timeval(options.command_timeout)) != REDIS_OK) {
    fail("setting the command timeout");
  }
  if (!options.password.empty()) {
    Args auth{"AUTH"};
    if (!options.username.empty()) auth.push_back(options.username);
    auth.push_back(options.password);
    const Reply r = command(auth);
    // The password is never part of the message.
    if (r.is_error())
      throw ConnectionError("redis: authentication failed at " + endpoint(options) + ": " + r.str);
  }
  // Operators see who is connected (CLIENT LIST): "boardkeeper:<pid>".
  command({"CLIENT", "SETNAME", "boardkeeper:" + std::to_string(getpid())}).checked();
  if (options.db != 0) {
    const Reply r = command({"SELECT", std::to_string(options.db)});
    if (r.is_error())
      throw ConnectionError("redis: SELECT " + std::to_string(options.db) + ": " + r.str);
  }
}

void Connection::fail(std::string_view doing) {
  const std::string msg =
      "redis " + endpoint(options_) + ": " + std::string(doing) + ": " + ctx_->errstr;
  const bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
  // A broken context cannot be used again; later calls fail fast with the same error.
  if (timed_out) throw TimeoutError(msg + " (timed out)");
  throw ConnectionError(msg);
}

void Connection::append(const Args& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  if (ctx_->err != 0) fail("connection already failed");
  if (redisAppendCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data()) !=
      REDIS_OK) {
    fail("sending a command");
  }
}

Reply Connection::read_reply() {
  void* raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) fail("reading a reply");
  const std::unique_ptr<redisReply, ReplyFree> owned(static_cast<redisReply*>(raw));
  return convert(*owned);
}

Reply Connection::command(const Args& args) {
  append(args);
  return read_reply();
}

std::vector<Reply> Connection::pipeline(const std::vector<Args>& commands) {
  for (const auto& c : commands) append(c);
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(read_reply());
  return replies;
}

}  // namespace bk::redis
