// One connection to Redis: hiredis behind RAII, commands and pipelines returning owned
// replies. Not thread-safe: give each thread its own Connection.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/reply.h"
#include "redis/url.h"

struct redisContext;

namespace bk::redis {

// Arguments of one command. Strings are sent as binary-safe bulk strings.
using Args = std::vector<std::string>;

// The most arguments a command may have (the command's name included): managed services
// refuse longer ones (ElastiCache Serverless: 3,999), so callers cut long calls into several
// and Connection refuses to send one (ReplyError), so that no call can grow past it unseen.
constexpr std::size_t kMaxCommandArguments = 3999;
// Throws that ReplyError for a command longer than that.
void check_command_lengths(const std::vector<Args>& commands);

class SharedLink;

// Why a server whose INFO server section is `info` cannot be used (boardkeeper needs Redis
// 7.0 or newer: PEXPIRETIME, XAUTOCLAIM's 7.0 reply, ...); nullopt when it can.
std::optional<std::string> version_problem(std::string_view info);

// When a Connection first connects.
enum class Connect {
  now,    // in the constructor, which throws ConnectionError when that fails
  later,  // at the first reconnect(); commands fail with ConnectionError until then
};

// With options.cluster, one Connection speaks to a whole Redis Cluster: it keeps the slot
// map (CLUSTER SLOTS), a server connection per node, routes each command by its first key
// (redis/slots.h), follows MOVED (the map is corrected) and ASK (ASKING, once), waits out
// TRYAGAIN and CLUSTERDOWN (capped backoff), loads scripts on every master, and groups a
// pipeline's commands by node (replies in the order of the commands). Any I/O failure makes
// the whole Connection unusable until reconnect(), which asks the seeds for the map again.
class Connection {
 public:
  // Connects, authenticates, names the client and selects the database (Connect::now).
  explicit Connection(const Options& options, Connect when = Connect::now);
  // A connection whose commands take the shared round trips of `link` (redis/shared_link.h):
  // what this class documents holds, but reconnect() only forgets replies not received (the
  // link reconnects when it next writes), connected() is always true, send() returns once
  // the replies are in, and pipeline()'s `while_waiting` runs once the replies are read (the
  // commands were at the server by then too). Never for blocking commands (BLPOP, XREADGROUP
  // BLOCK: they would hold every caller) or connection state (WATCH, SELECT, CLIENT ...).
  explicit Connection(std::shared_ptr<SharedLink> link);
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  // Sends one command and returns its reply (an error reply is returned, not thrown).
  Reply command(const Args& args);
  // Sends every command, then reads every reply, in order, even when some are errors.
  // `while_waiting`, when given, runs once every command is written and before any reply is
  // read: work that overlaps the server's (it must not use this connection). Should it
  // throw, this connection is dropped (its replies are unread) and the exception goes on.
  std::vector<Reply> pipeline(const std::vector<Args>& commands,
                              const std::function<void()>& while_waiting = {});
  // Commands written now (in one write), their replies read later by receive(), one call
  // each, in the order of the commands sent.
  void send(const std::vector<Args>& commands);
  Reply receive();

  // Which of `keys` may go into one multi-key command together (as indexes into keys, in
  // first-seen order): all of them on a single server; on a cluster, the keys of each hash
  // slot (a command across slots is refused with CROSSSLOT).
  std::vector<std::vector<std::size_t>> key_groups(const std::vector<std::string>& keys) const;

  // Commands meant for each server rather than for a key (SCAN, INFO, FLUSHALL): how many
  // masters serve slots (1 for a single server), and one command on master i of them.
  std::size_t masters();
  Reply master_command(std::size_t i, const Args& args);
  // A command about the server that holds `key` rather than about a key (INFO replication,
  // CLUSTER NODES of a stream's node): on a cluster, the master of key's slot as the map
  // says (no redirect is followed: the command names no key); the server otherwise.
  Reply node_command(std::string_view key, const Args& args);

  // Replaces the server connection in place, with the same options (AUTH, CLIENT SETNAME,
  // SELECT again), so everything holding this Connection keeps a valid one. Throws
  // ConnectionError when the server cannot be reached; the connection is then unusable
  // (connected() is false) until a later reconnect() succeeds.
  void reconnect();
  // A server connection exists and has not failed (a failed one is never used again).
  bool connected() const;
  // How many times a server connection was made: state cached per server connection
  // (registered boards, loaded scripts...) is stale when this changed.
  std::uint64_t generation() const;

  const Options& options() const { return options_; }

 private:
  struct Node;      // one server connection
  struct Pending {  // a command sent by send() (cluster): its node, or its reply already read
    std::size_t node = 0;
    Args args;
    std::optional<Reply> reply;
  };
  Options options_;
  std::shared_ptr<SharedLink> link_;          // set: every command goes through it
  std::vector<std::unique_ptr<Node>> nodes_;  // one unless options_.cluster
  std::vector<int> slots_;                    // cluster: the node serving each slot, or -1
  std::deque<Pending> pending_;               // cluster, link: sent, replies not received yet
  bool broken_ = false;                       // cluster: unusable until reconnect()
  std::uint64_t generation_ = 0;

  Node& single();
  Reply on_server(const Args& args);  // single server or link
  // Cluster.
  void refresh_topology();
  std::size_t node_at(const std::string& host, int port);
  Node& ready(std::size_t node);  // connected (connects when it is not)
  std::size_t route(const Args& args);
  std::size_t node_of_slot(int slot);  // refreshes the map once when no node serves it
  std::vector<std::size_t> master_nodes();
  Reply cluster_command(const Args& args);
  template <class F>
  auto guard(F&& f) -> decltype(f());
};

}  // namespace bk::redis
