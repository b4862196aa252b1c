// What the HTTP server lets its clients hold at once, as arithmetic without sockets: bytes of
// request bodies in flight (all clients together, and per key: a token, or a client's
// address) and requests in progress per key (Admission); and when a flood has ended, so that
// the memory it took can be handed back (FloodMark). The server asks both on its I/O thread.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace bk::http {

class Admission {
 public:
  struct Limits {
    std::size_t body_bytes = std::size_t{64} << 20;          // all keys together
    std::size_t body_bytes_per_key = std::size_t{16} << 20;  // one key's share of them
    std::size_t requests_per_key = 1024;                     // one key's requests in progress
  };
  enum class Verdict {
    admitted,
    too_large,     // the body alone is over a limit: never admitted (413)
    server_full,   // the bodies in flight leave no room for it (503)
    key_bodies,    // the key's bodies in flight leave no room for it (429)
    key_requests,  // the key has requests_per_key in progress (429)
  };

  explicit Admission(Limits limits) : limits_(limits) {}

  // A request of `key` whose body is `body_bytes` long (0: none): admitted (its bytes and a
  // request counted until release()), or why not (nothing counted).
  Verdict admit(const std::string& key, std::size_t body_bytes);
  // What admit() counted for that request, given back (answered, or dropped).
  void release(const std::string& key, std::size_t body_bytes);

  const Limits& limits() const { return limits_; }
  std::size_t body_bytes() const { return body_bytes_; }  // in flight, all keys
  std::size_t body_bytes_of(const std::string& key) const;
  std::size_t requests_of(const std::string& key) const;
  std::size_t keys() const { return held_.size(); }  // keys holding anything (none are kept idle)

 private:
  struct Held {
    std::size_t body_bytes = 0;
    std::size_t requests = 0;
  };
  Limits limits_;
  std::size_t body_bytes_ = 0;
  std::unordered_map<std::string, Held> held_;
};

// The share key of a client known only by its address (`peer`, as the socket gives it): an
// IPv4 address itself (also one mapped into IPv6, ::ffff:a.b.c.d), an IPv6 address by its /64
// (a client owns a /64 and can send from any of its 2^64 addresses), anything else as sent.
std::string address_share(std::string_view peer);

// Whether a flood has ended: the memory held (bodies in flight and connections, as the server
// counts it) fell to a quarter of its highest mark since the last time, and that mark was at
// least `floor`. Then the allocator's free memory is worth handing back to the system (once;
// the mark starts again from what is held).
class FloodMark {
 public:
  explicit FloodMark(std::size_t floor) : floor_(floor) {}

  // The memory held now; true when a flood has just ended.
  bool ended(std::size_t held);
  std::size_t high() const { return high_; }

 private:
  std::size_t floor_;
  std::size_t high_ = 0;
};

}  // namespace bk::http
