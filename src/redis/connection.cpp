// hiredis 0.14 wrapped: every context is owned the moment it exists, every reply is read
// into a Reply (hiredis's reader builds it), and every context error becomes one exception type.
#include "redis/connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "redis/error.h"

namespace bk::redis {
namespace {

timeval to_timeval(Millis ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis's reader builds each reply straight into a Reply through these object functions,
// so a reply is allocated once (not as hiredis's redisReply and then again as a copy). An
// element is constructed in place in its parent's elements, sized when the array is read;
// hiredis only ever frees the root (on a protocol error, or when its reader goes).
Reply* place(const redisReadTask* task) {
  if (task->parent == nullptr) return new Reply();
  return &static_cast<Reply*>(task->parent->obj)->elements[static_cast<std::size_t>(task->idx)];
}

template <typename Fill>
void* create(const redisReadTask* task, Fill fill) noexcept {
  Reply* r = nullptr;
  try {
    r = place(task);
    fill(*r);
    return r;
  } catch (...) {  // out of memory: hiredis reports it (exceptions must not cross C code)
    if (task->parent == nullptr) delete r;
    return nullptr;
  }
}

void* create_string(const redisReadTask* task, char* str, std::size_t len) {
  return create(task, [&](Reply& r) {
    r.type = task->type == REDIS_REPLY_ERROR    ? Reply::Type::error
             : task->type == REDIS_REPLY_STATUS ? Reply::Type::status
                                                : Reply::Type::string;
    r.str.assign(str, len);
  });
}
void* create_array(const redisReadTask* task, int elements) {
  return create(task, [&](Reply& r) {
    r.type = Reply::Type::array;
    r.elements.resize(static_cast<std::size_t>(elements));
  });
}
void* create_integer(const redisReadTask* task, long long value) {
  return create(task, [&](Reply& r) {
    r.type = Reply::Type::integer;
    r.integer = value;
  });
}
void* create_nil(const redisReadTask* task) {
  return create(task, [](Reply& r) { r.type = Reply::Type::nil; });
}
void free_reply(void* reply) {
  delete static_cast<Reply*>(reply);
}
redisReplyObjectFunctions reply_functions{create_string, create_array, create_integer, create_nil,
                                          free_reply};

std::string endpoint(const Options& o) {
  return o.unix_path.empty() ? o.host + ":" + std::to_string(o.port) : o.unix_path;
}

}  // namespace

void Connection::Free::operator()(redisContext* c) const {
  redisFree(c);
}

Connection::Connection(const Options& options, Connect when) : options_(options) {
  if (when == Connect::now) reconnect();
}

void Connection::reconnect() {
  ctx_.reset();
  try {
    open();
    // The handshake gets the connect timeout: a server that accepts connections but does
    // not answer (frozen, overloaded) is found out in seconds, not after a command timeout.
    set_timeout(options_.connect_timeout);
    authenticate();
    name_client();
    select_db();
    set_timeout(options_.command_timeout);
  } catch (...) {
    ctx_.reset();  // never half set up: the next command fails fast, reconnect() starts over
    throw;
  }
  ++generation_;
}

bool Connection::connected() const {
  return ctx_ && ctx_->err == 0;
}

void Connection::open() {
  const timeval connect_tv = to_timeval(options_.connect_timeout);
  redisContext* raw =
      options_.unix_path.empty()
          ? redisConnectWithTimeout(options_.host.c_str(), options_.port, connect_tv)
          : redisConnectUnixWithTimeout(options_.unix_path.c_str(), connect_tv);
  if (raw == nullptr)
    throw ConnectionError("redis: out of memory connecting to " + endpoint(options_));
  ctx_.reset(raw);
  if (ctx_->err != 0) {
    throw_context_error(ctx_->err, errno,
                        "redis: cannot connect to " + endpoint(options_) + ": " + ctx_->errstr);
  }
  ctx_->reader->fn = &reply_functions;
}

void Connection::set_timeout(Millis timeout) {
  if (redisSetTimeout(ctx_.get(), to_timeval(timeout)) != REDIS_OK) fail("setting a timeout");
}

void Connection::authenticate() {
  if (options_.password.empty()) return;
  Args auth{"AUTH"};
  if (!options_.username.empty()) auth.push_back(options_.username);
  auth.push_back(options_.password);
  const Reply r = command(auth);
  // The password is never part of the message.
  if (r.is_error())
    throw ConnectionError("redis: authentication failed at " + endpoint(options_) + ": " + r.str);
}

void Connection::name_client() {
  // Operators see who is connected (CLIENT LIST): "boardkeeper:<pid>[:<role>]".
  std::string name = "boardkeeper:" + std::to_string(getpid());
  if (!options_.role.empty()) name += ":" + options_.role;
  command({"CLIENT", "SETNAME", name}).checked();
}

void Connection::select_db() {
  if (options_.db == 0) return;
  const Reply r = command({"SELECT", std::to_string(options_.db)});
  if (r.is_error())
    throw ConnectionError("redis: SELECT " + std::to_string(options_.db) + ": " + r.str);
}

void Connection::fail(std::string_view doing) {
  const int saved_errno = errno;
  // A broken context cannot be used again; later calls fail fast with the same error.
  throw_context_error(
      ctx_->err, saved_errno,
      "redis " + endpoint(options_) + ": " + std::string(doing) + ": " + ctx_->errstr);
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
  if (!ctx_) throw ConnectionError("redis " + endpoint(options_) + ": not connected");
  if (ctx_->err != 0) fail("connection already failed");
  if (redisAppendCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data()) !=
      REDIS_OK) {
    fail("sending a command");
  }
}

Reply Connection::read_reply() {
  void* raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) fail("reading a reply");
  const std::unique_ptr<Reply> owned(static_cast<Reply*>(raw));
  return std::move(*owned);
}

Reply Connection::command(const Args& args) {
  append(args);
  return read_reply();
}

// Writes what is buffered (hiredis otherwise writes it when the first reply is read).
void Connection::flush() {
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) fail("sending commands");
  }
}

void Connection::send(const std::vector<Args>& commands) {
  for (const auto& c : commands) append(c);
  flush();
}

Reply Connection::receive() {
  if (!ctx_) throw ConnectionError("redis " + endpoint(options_) + ": not connected");
  return read_reply();
}

std::vector<Reply> Connection::pipeline(const std::vector<Args>& commands,
                                        const std::function<void()>& while_waiting) {
  for (const auto& c : commands) append(c);
  if (while_waiting) {
    flush();
    try {
      while_waiting();
    } catch (...) {
      ctx_.reset();  // its replies would answer the next commands
      throw;
    }
  }
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(read_reply());
  return replies;
}

}  // namespace bk::redis
