// Connections to Redis: the bytes go through a Transport (socket or TLS), hiredis 0.14
// formats the commands and its reader builds each reply straight into a Reply; a cluster is
// routed here (slots, redirects, a Node per server).
#include "redis/connection.h"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "redis/error.h"
#include "redis/shared_link.h"
#include "redis/slots.h"
#include "redis/transport.h"

namespace bk::redis {
namespace {

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

}  // namespace

std::optional<std::string> version_problem(std::string_view info) {
  const std::string_view field = "redis_version:";
  const auto at = info.find(field);
  if (at == std::string_view::npos) return std::string("it did not say its version (INFO server)");
  std::string_view v = info.substr(at + field.size());
  v = v.substr(0, v.find_first_of("\r\n"));
  const int major = std::atoi(std::string(v).c_str());
  if (major >= 7) return std::nullopt;
  return "it is Redis " + std::string(v) +
         "; boardkeeper needs Redis 7.0 or newer (PEXPIRETIME, the 7.0 XAUTOCLAIM reply)";
}

// ---- one server connection ---------------------------------------------------------------

struct Connection::Node {
  struct FreeReader {
    void operator()(redisReader* r) const { redisReaderFree(r); }
  };
  Options options;                       // this server's: host and port set per node in a cluster
  std::unique_ptr<Transport> transport;  // none: not connected, or failed (never used again)
  std::unique_ptr<redisReader, FreeReader> reader;
  std::string out;  // commands formatted, not written yet
  // Why the last connect failed ("" when it did not): a command on the closed connection
  // says it, so that a caller who went on without Redis still learns why it is missing.
  std::string connect_failure;
  // The last failure was a wait that ran out (a frozen server): commands until the next
  // connect fail as TimeoutError, so that callers still tell a hung server from a refusal.
  bool failed_hung = false;
  Shun* shun;  // this server's, when options.shuns is set

  explicit Node(Options o)
      : options(std::move(o)),
        shun(options.shuns ? &options.shuns->of(endpoint(options)) : nullptr) {}

  bool connected() const { return transport != nullptr; }

  void close() {
    transport.reset();
    reader.reset();
    out.clear();
  }

  // Connects, authenticates, names the client and selects the database.
  void connect() {
    close();
    if (shun != nullptr && !shun->may_try()) {
      connect_failure = "it did not answer in time lately; not tried again yet";
      failed_hung = true;
      throw TimeoutError("redis " + endpoint(options) + ": " + connect_failure);
    }
    try {
      transport = Transport::open(options);
      reader.reset(redisReaderCreateWithFunctions(&reply_functions));
      if (!reader) throw ConnectionError("redis: out of memory connecting to " + endpoint(options));
      // The handshake gets the connect timeout: a server that accepts connections but does
      // not answer (frozen, overloaded) is found out in seconds, not after a command timeout.
      transport->set_timeout(options.connect_timeout);
      authenticate();
      check_version();
      name_client();
      select_db();
      transport->set_timeout(options.command_timeout);
      connect_failure.clear();
      failed_hung = false;
      if (shun != nullptr) shun->end();
    } catch (const std::exception& e) {
      close();  // never half set up: the next command fails fast, reconnect() starts over
      connect_failure = e.what();
      const auto* error = dynamic_cast<const Error*>(&e);
      failed_hung = error != nullptr && error->hung();
      if (failed_hung && shun != nullptr) shun->shun();
      throw;
    }
  }

  void authenticate() {
    if (options.password.empty()) return;
    Args auth{"AUTH"};
    if (!options.username.empty()) auth.push_back(options.username);
    auth.push_back(options.password);
    const Reply r = command(auth);
    // The password is never part of the message.
    if (r.is_error())
      throw ConnectionError("redis: authentication failed at " + endpoint(options) + ": " + r.str);
  }

  void check_version() {
    const Reply info = command({"INFO", "server"});
    if (info.is_error()) return;  // INFO renamed or refused (managed services): trust it
    if (const auto problem = version_problem(info.str)) {
      throw ReplyError("redis " + endpoint(options) + ": " + *problem);
    }
  }

  void name_client() {
    // Operators see who is connected (CLIENT LIST): "boardkeeper:<pid>[:<role>]".
    std::string name = "boardkeeper:" + std::to_string(getpid());
    if (!options.role.empty()) name += ":" + options.role;
    command({"CLIENT", "SETNAME", name}).checked();
  }

  void select_db() {
    if (options.db == 0) return;
    const Reply r = command({"SELECT", std::to_string(options.db)});
    if (r.is_error())
      throw ConnectionError("redis: SELECT " + std::to_string(options.db) + ": " + r.str);
  }

  Transport& live() {
    if (!transport) {
      const std::string what = "redis " + endpoint(options) + ": not connected" +
                               (connect_failure.empty() ? "" : " (" + connect_failure + ")");
      if (failed_hung) throw TimeoutError(what + " after no answer in time");
      throw ConnectionError(what);
    }
    return *transport;
  }

  // Runs an I/O step; a connection that failed once is closed (a later command fails fast).
  template <class F>
  auto io(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error& e) {
      close();
      failed_hung = e.hung();
      if (failed_hung && shun != nullptr) shun->shun();
      throw;
    } catch (...) {
      close();
      throw;
    }
  }

  void append(const Args& args) {
    live();
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    argv.reserve(args.size());
    lens.reserve(args.size());
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    char* formatted = nullptr;
    const int size =
        redisFormatCommandArgv(&formatted, static_cast<int>(argv.size()), argv.data(), lens.data());
    if (size < 0 || formatted == nullptr) {
      throw ConnectionError("redis " + endpoint(options) + ": out of memory formatting a command");
    }
    const std::unique_ptr<char, decltype(&redisFreeCommand)> owned(formatted, &redisFreeCommand);
    out.append(formatted, static_cast<std::size_t>(size));
  }

  // Writes what is buffered (read_reply() also does, first).
  void flush() {
    Transport& t = live();
    if (out.empty()) return;
    io([&] { t.write(out); });
    out.clear();
  }

  Reply read_reply() {
    flush();
    return io([&] {
      for (;;) {
        void* raw = nullptr;
        if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) {
          throw ProtoError("redis " + endpoint(options) +
                           ": reading a reply: " + std::string(reader->errstr));
        }
        if (raw != nullptr) {
          const std::unique_ptr<Reply> owned(static_cast<Reply*>(raw));
          return std::move(*owned);
        }
        char buffer[16 * 1024];
        const std::size_t n = transport->read(buffer, sizeof buffer);
        if (redisReaderFeed(reader.get(), buffer, n) != REDIS_OK) {
          throw ProtoError("redis " + endpoint(options) +
                           ": reading a reply: " + std::string(reader->errstr));
        }
      }
    });
  }

  Reply command(const Args& args) {
    append(args);
    return read_reply();
  }
};

namespace {

// What a cluster's error reply asks of the client.
enum class Redirect { none, moved, ask, again, down };

Redirect redirect_of(const Reply& r) {
  if (!r.is_error()) return Redirect::none;
  const std::string& s = r.str;
  if (s.rfind("MOVED ", 0) == 0) return Redirect::moved;
  if (s.rfind("ASK ", 0) == 0) return Redirect::ask;
  if (s.rfind("TRYAGAIN", 0) == 0) return Redirect::again;
  if (s.rfind("CLUSTERDOWN", 0) == 0) return Redirect::down;
  return Redirect::none;
}

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 [::1]:6381": the slot and the node.
struct Target {
  int slot = -1;
  std::string host;
  int port = 0;
};

Target target_of(const std::string& error) {
  Target t;
  const auto first = error.find(' ');
  const auto second = error.find(' ', first + 1);
  if (first == std::string::npos || second == std::string::npos) {
    throw ProtoError("redis cluster: a redirect without a node: " + error);
  }
  t.slot = std::atoi(error.c_str() + first + 1);
  std::string endpoint = error.substr(second + 1);
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos || t.slot < 0 || t.slot >= kClusterSlots) {
    throw ProtoError("redis cluster: a redirect without a node: " + error);
  }
  t.port = std::atoi(endpoint.c_str() + colon + 1);
  t.host = endpoint.substr(0, colon);
  if (t.host.size() >= 2 && t.host.front() == '[' && t.host.back() == ']') {
    t.host = t.host.substr(1, t.host.size() - 2);
  }
  return t;
}

bool is_script_load(const Args& args) {
  return args.size() >= 2 && (args[0] == "SCRIPT" || args[0] == "script") &&
         (args[1] == "LOAD" || args[1] == "load");
}

// TRYAGAIN and CLUSTERDOWN: 10 ms, doubling, at most 500 ms a wait.
void back_off(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(500, 10 << std::min(attempt, 6))));
}

constexpr int kMaxRedirects = 16;

// Before anything is written: a refused command must not leave others half sent.
void check_length(const Args& args) {
  if (args.size() > kMaxCommandArguments) {
    throw ReplyError("redis: refusing to send " + (args.empty() ? std::string() : args[0]) +
                     " with " + std::to_string(args.size()) + " arguments (at most " +
                     std::to_string(kMaxCommandArguments) +
                     ", which managed Redis services accept)");
  }
}

}  // namespace

void check_command_lengths(const std::vector<Args>& commands) {
  for (const Args& c : commands) check_length(c);
}

// ---- Connection --------------------------------------------------------------------------

Connection::Connection(const Options& options, Connect when) : options_(options) {
  if (!options_.cluster) nodes_.push_back(std::make_unique<Node>(options_));
  if (when == Connect::now) reconnect();
}
Connection::Connection(std::shared_ptr<SharedLink> link)
    : options_(link->options()), link_(std::move(link)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

std::uint64_t Connection::generation() const {
  return link_ ? link_->generation() : generation_;
}

Reply Connection::on_server(const Args& args) {
  if (link_) return std::move(link_->call({args}).front());
  return single().command(args);
}

Connection::Node& Connection::single() {
  return *nodes_.front();
}

void Connection::reconnect() {
  if (link_) {  // the link reconnects itself; replies sent for before are not received
    pending_.clear();
    return;
  }
  if (!options_.cluster) {
    single().connect();
    ++generation_;
    return;
  }
  for (auto& n : nodes_) n->close();
  pending_.clear();
  broken_ = true;
  refresh_topology();
  broken_ = false;
}

bool Connection::connected() const {
  if (link_) return true;
  if (!options_.cluster) return nodes_.front()->connected();
  return !broken_ && !slots_.empty();
}

std::size_t Connection::node_at(const std::string& host, int port) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i]->options.host == host && nodes_[i]->options.port == port) return i;
  }
  Options o = options_;
  o.host = host;
  o.port = port;
  o.unix_path.clear();
  o.db = 0;
  o.seeds.clear();
  nodes_.push_back(std::make_unique<Node>(std::move(o)));
  return nodes_.size() - 1;
}

Connection::Node& Connection::ready(std::size_t node) {
  Node& n = *nodes_[node];
  if (!n.connected()) {
    n.connect();
    ++generation_;
  }
  return n;
}

void Connection::refresh_topology() {
  // The seeds, then every node known so far: the first that answers gives the map.
  std::vector<std::pair<std::string, int>> candidates{{options_.host, options_.port}};
  candidates.insert(candidates.end(), options_.seeds.begin(), options_.seeds.end());
  for (const auto& n : nodes_) candidates.emplace_back(n->options.host, n->options.port);
  std::string last_error = "no seed";
  for (const auto& [host, port] : candidates) {
    const std::size_t seed = node_at(host, port);
    Reply slots;
    try {
      slots = ready(seed).command({"CLUSTER", "SLOTS"});
    } catch (const ConnectionError& e) {
      last_error = e.what();
      nodes_[seed]->close();
      continue;
    }
    if (slots.is_error()) {
      last_error = "redis " + endpoint(nodes_[seed]->options) + ": CLUSTER SLOTS: " + slots.str;
      continue;
    }
    std::vector<int> map(kClusterSlots, -1);
    for (const Reply& range : slots.elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      const Reply& master = range.elements[2];
      // An empty or "?" host means "where you reached me".
      std::string host_of = master.elements[0].str;
      if (host_of.empty() || host_of == "?") host_of = nodes_[seed]->options.host;
      const std::size_t owner = node_at(host_of, static_cast<int>(master.elements[1].integer));
      const auto from = std::max<long long>(0, range.elements[0].integer);
      const auto to = std::min<long long>(kClusterSlots - 1, range.elements[1].integer);
      for (long long s = from; s <= to; ++s)
        map[static_cast<std::size_t>(s)] = static_cast<int>(owner);
    }
    slots_ = std::move(map);
    return;
  }
  slots_.clear();
  throw ConnectionError("redis cluster: no node answered CLUSTER SLOTS (last: " + last_error + ")");
}

std::size_t Connection::route(const Args& args) {
  const auto key = routing_key(args);
  return node_of_slot(key ? key_slot(*key) : 0);
}

std::size_t Connection::node_of_slot(int slot) {
  if (slots_.empty()) refresh_topology();
  int owner = slots_[static_cast<std::size_t>(slot)];
  if (owner < 0) {
    refresh_topology();
    owner = slots_[static_cast<std::size_t>(slot)];
    if (owner < 0) {
      throw ConnectionError("redis cluster: slot " + std::to_string(slot) +
                            " is served by no node (CLUSTERDOWN)");
    }
  }
  return static_cast<std::size_t>(owner);
}

// Runs f; any failure leaves the whole cluster connection unusable until reconnect() (some
// node may hold replies nobody will read).
template <class F>
auto Connection::guard(F&& f) -> decltype(f()) {
  if (broken_) throw ConnectionError("redis cluster: not connected (reconnect first)");
  try {
    return f();
  } catch (...) {
    broken_ = true;
    for (auto& n : nodes_) n->close();
    pending_.clear();
    throw;
  }
}

std::vector<std::size_t> Connection::master_nodes() {
  if (slots_.empty()) refresh_topology();
  std::vector<std::size_t> out;
  for (const int node : slots_) {
    if (node >= 0) out.push_back(static_cast<std::size_t>(node));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::vector<std::size_t>> Connection::key_groups(
    const std::vector<std::string>& keys) const {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<int> slot_of_group;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const int slot = options_.cluster ? key_slot(keys[i]) : 0;
    const auto at = std::find(slot_of_group.begin(), slot_of_group.end(), slot);
    if (at == slot_of_group.end()) {
      slot_of_group.push_back(slot);
      groups.push_back({i});
    } else {
      groups[static_cast<std::size_t>(at - slot_of_group.begin())].push_back(i);
    }
  }
  return groups;
}

std::size_t Connection::masters() {
  if (!options_.cluster) return 1;
  return guard([&] { return master_nodes().size(); });
}

Reply Connection::master_command(std::size_t i, const Args& args) {
  check_length(args);
  if (!options_.cluster) return on_server(args);
  return guard([&] {
    const std::vector<std::size_t> m = master_nodes();
    if (i >= m.size()) throw ConnectionError("redis cluster: no master " + std::to_string(i));
    return ready(m[i]).command(args);
  });
}

Reply Connection::node_command(std::string_view key, const Args& args) {
  check_length(args);
  if (!options_.cluster) return on_server(args);
  return guard([&] { return ready(node_of_slot(key_slot(key))).command(args); });
}

Reply Connection::cluster_command(const Args& args) {
  if (is_script_load(args)) {
    // NOSCRIPT is per node: every master gets the script.
    Reply first;
    bool have = false;
    for (const std::size_t m : master_nodes()) {
      Reply r = ready(m).command(args);
      if (!have || r.is_error()) first = std::move(r);
      have = true;
    }
    if (have) return first;
  }
  Reply r;
  for (int attempt = 0; attempt < kMaxRedirects; ++attempt) {
    const std::size_t node = route(args);
    r = ready(node).command(args);
    switch (redirect_of(r)) {
      case Redirect::none:
        return r;
      case Redirect::moved: {
        const Target t = target_of(r.str);
        slots_[static_cast<std::size_t>(t.slot)] = static_cast<int>(node_at(t.host, t.port));
        break;
      }
      case Redirect::ask: {
        // The slot is moving: this key is already at the target; ask there once.
        const Target t = target_of(r.str);
        Node& n = ready(node_at(t.host, t.port));
        n.append({"ASKING"});
        n.append(args);
        n.read_reply();
        r = n.read_reply();
        if (redirect_of(r) != Redirect::again) return r;
        back_off(attempt);
        break;
      }
      case Redirect::again:
        back_off(attempt);
        break;
      case Redirect::down:
        back_off(attempt);
        refresh_topology();
        break;
    }
  }
  return r;
}

Reply Connection::command(const Args& args) {
  check_length(args);
  if (!options_.cluster) return on_server(args);
  return guard([&] { return cluster_command(args); });
}

void Connection::send(const std::vector<Args>& commands) {
  check_command_lengths(commands);
  if (link_) {
    for (Reply& r : link_->call(commands)) pending_.push_back({0, {}, std::move(r)});
    return;
  }
  if (!options_.cluster) {
    for (const auto& c : commands) single().append(c);
    single().flush();
    return;
  }
  guard([&] {
    std::vector<bool> used;
    for (const auto& c : commands) {
      const std::size_t node = route(c);
      ready(node).append(c);
      if (used.size() <= node) used.resize(node + 1, false);
      used[node] = true;
      pending_.push_back({node, c, std::nullopt});
    }
    for (std::size_t i = 0; i < used.size(); ++i) {
      if (used[i]) nodes_[i]->flush();
    }
    return 0;
  });
}

Reply Connection::receive() {
  if (link_) {
    if (pending_.empty()) throw ConnectionError("redis: receive() without a command sent");
    Reply r = std::move(*pending_.front().reply);
    pending_.pop_front();
    return r;
  }
  if (!options_.cluster) return single().read_reply();
  return guard([&] {
    if (pending_.empty()) throw ConnectionError("redis cluster: receive() without a command sent");
    Pending p = std::move(pending_.front());
    pending_.pop_front();
    Reply r = p.reply ? std::move(*p.reply) : nodes_[p.node]->read_reply();
    if (redirect_of(r) == Redirect::none) return r;
    // Asked elsewhere: first every reply already on its way is read, so that the nodes'
    // connections are free for the command sent again.
    for (Pending& q : pending_) {
      if (!q.reply) q.reply = nodes_[q.node]->read_reply();
    }
    return cluster_command(p.args);
  });
}

std::vector<Reply> Connection::pipeline(const std::vector<Args>& commands,
                                        const std::function<void()>& while_waiting) {
  check_command_lengths(commands);
  if (link_) {
    std::vector<Reply> replies = link_->call(commands);
    if (while_waiting) while_waiting();
    return replies;
  }
  if (!options_.cluster) {
    Node& n = single();
    for (const auto& c : commands) n.append(c);
    if (while_waiting) {
      n.flush();
      try {
        while_waiting();
      } catch (...) {
        n.close();  // its replies would answer the next commands
        throw;
      }
    }
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(n.read_reply());
    return replies;
  }
  return guard([&] {
    // Grouped by node; each node's replies come back in the order of its commands.
    std::vector<std::vector<std::size_t>> by_node;
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const std::size_t node = route(commands[i]);
      if (by_node.size() <= node) by_node.resize(node + 1);
      by_node[node].push_back(i);
    }
    for (std::size_t node = 0; node < by_node.size(); ++node) {
      if (by_node[node].empty()) continue;
      Node& n = ready(node);
      for (const std::size_t i : by_node[node]) n.append(commands[i]);
      n.flush();
    }
    if (while_waiting) while_waiting();
    std::vector<Reply> replies(commands.size());
    for (std::size_t node = 0; node < by_node.size(); ++node) {
      for (const std::size_t i : by_node[node]) replies[i] = nodes_[node]->read_reply();
    }
    // Moved, asked elsewhere or to wait: sent again one by one, in order.
    for (std::size_t i = 0; i < commands.size(); ++i) {
      if (redirect_of(replies[i]) != Redirect::none) replies[i] = cluster_command(commands[i]);
    }
    return replies;
  });
}

}  // namespace bk::redis
