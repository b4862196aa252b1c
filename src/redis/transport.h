// How bytes reach a Redis server: a TCP or unix socket, or TLS over TCP. Debian's hiredis 0.14
// has no TLS, so the connection's bytes go through this (OpenSSL for TLS) and hiredis only
// formats commands and parses replies. Only src/redis knows about it.
#pragma once
#include <cstddef>
#include <memory>
#include <string_view>

#include "redis/url.h"

namespace bk::redis {

class Transport {
 public:
  // Connects to the server `options` name within options.connect_timeout, the TLS handshake
  // (certificate and name verified) included with options.tls.enabled. Throws
  // ConnectionError with the system's or OpenSSL's reason, never with a secret.
  static std::unique_ptr<Transport> open(const Options& options);

  virtual ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // How long each later read or write may wait before it fails with TimeoutError.
  void set_timeout(Millis timeout);
  // Writes all of `data`.
  virtual void write(std::string_view data) = 0;
  // Reads at least one byte and at most `size` into `buffer`: how many. ClosedError when
  // the server closed the connection.
  virtual std::size_t read(char* buffer, std::size_t size) = 0;

 protected:
  Transport(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  int fd_;
  std::string where_;  // "redis host:port", for messages
};

}  // namespace bk::redis
