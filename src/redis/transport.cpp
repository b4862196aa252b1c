// Sockets and TLS for Connection. Blocking sockets with SO_RCVTIMEO/SO_SNDTIMEO (as hiredis
// does): a read or write that waits longer fails with EAGAIN, which becomes TimeoutError.
// Writes use send(MSG_NOSIGNAL), TLS ones too (through a BIO of our own), so a server that
// went away is an error to handle, never a SIGPIPE that kills the process.
#include "redis/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "redis/error.h"

namespace bk::redis {
namespace {

std::string errno_text(int e) {
  return std::error_code(e, std::generic_category()).message();
}

bool would_block(int e) {
  return e == EAGAIN || e == EWOULDBLOCK;
}

// A socket owned until it is handed over.
struct Socket {
  int fd = -1;
  explicit Socket(int f) : fd(f) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

void set_socket_timeout(int fd, Millis timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(timeout.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void set_blocking(int fd, bool blocking) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, blocking ? (flags & ~O_NONBLOCK) : (flags | O_NONBLOCK));
}

// Connects `fd` within `timeout`: "" when it did, else why not.
std::string connect_within(int fd, const sockaddr* addr, socklen_t len, Millis timeout) {
  set_blocking(fd, false);
  if (::connect(fd, addr, len) != 0) {
    if (errno != EINPROGRESS) return errno_text(errno);
    pollfd p{fd, POLLOUT, 0};
    int ready = 0;
    do {
      ready = poll(&p, 1, static_cast<int>(timeout.count()));
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) return "timed out";
    if (ready < 0) return errno_text(errno);
    int error = 0;
    socklen_t size = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    if (error != 0) return errno_text(error);
  }
  set_blocking(fd, true);
  return {};
}

[[noreturn]] void cannot_connect(const Options& o, const std::string& why) {
  throw ConnectionError("redis: cannot connect to " + endpoint(o) + ": " + why);
}

int connect_unix(const Options& o) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (o.unix_path.size() >= sizeof addr.sun_path) cannot_connect(o, "the socket path is too long");
  std::memcpy(addr.sun_path, o.unix_path.c_str(), o.unix_path.size() + 1);
  Socket s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0) cannot_connect(o, errno_text(errno));
  const std::string why = connect_within(s.fd, reinterpret_cast<const sockaddr*>(&addr),
                                         sizeof addr, o.connect_timeout);
  if (!why.empty()) cannot_connect(o, why);
  return s.release();
}

int connect_tcp(const Options& o) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &found);
  if (rc != 0) cannot_connect(o, gai_strerror(rc));
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  std::string why = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Socket s(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd < 0) {
      why = errno_text(errno);
      continue;
    }
    why = connect_within(s.fd, a->ai_addr, a->ai_addrlen, o.connect_timeout);
    if (!why.empty()) continue;
    const int on = 1;
    setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    setsockopt(s.fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    return s.release();
  }
  cannot_connect(o, why);
}

class PlainTransport final : public Transport {
 public:
  PlainTransport(int fd, std::string where) : Transport(fd, std::move(where)) {}

  void write(std::string_view data) override {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(errno, "sending commands");
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  std::size_t read(char* buffer, std::size_t size) override {
    for (;;) {
      const ssize_t n = recv(fd_, buffer, size, 0);
      if (n > 0) return static_cast<std::size_t>(n);
      if (n == 0) throw ClosedError(where_ + ": reading a reply: the server closed the connection");
      if (errno != EINTR) fail(errno, "reading a reply");
    }
  }

 private:
  [[noreturn]] void fail(int e, const char* doing) {
    if (would_block(e)) throw TimeoutError(where_ + ": " + doing + ": timed out");
    throw ConnectionError(where_ + ": " + doing + ": " + errno_text(e));
  }
};

// ---- TLS ---------------------------------------------------------------------------------

// OpenSSL's error queue as text: the reasons, oldest first ("certificate verify failed").
std::string openssl_reasons() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    char text[256];
    if (reason == nullptr) {
      ERR_error_string_n(e, text, sizeof text);
      reason = text;
    }
    if (!out.empty()) out += "; ";
    out += reason;
  }
  return out;
}

// A socket BIO whose writes never raise SIGPIPE; its data points to the socket's fd.
int bio_fd(BIO* bio) {
  return *static_cast<const int*>(BIO_get_data(bio));
}
int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n = 0;
  do {
    n = send(bio_fd(bio), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && would_block(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}
int bio_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n = 0;
  do {
    n = recv(bio_fd(bio), data, static_cast<std::size_t>(size), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && would_block(errno)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}
long bio_ctrl(BIO* /*bio*/, int command, long /*num*/, void* /*ptr*/) {
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}
BIO_METHOD* socket_bio() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "boardkeeper socket");
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    return m;
  }();
  return method;
}

struct FreeCtx {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct FreeSsl {
  void operator()(SSL* s) const { SSL_free(s); }
};

// The client's TLS context: verify the server against the CA file (or the system store),
// present the client certificate when one is given. Key files with a passphrase are refused
// (OpenSSL would otherwise ask for it on the terminal).
std::unique_ptr<SSL_CTX, FreeCtx> tls_context(const Options& o) {
  const TlsOptions& t = o.tls;
  std::unique_ptr<SSL_CTX, FreeCtx> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) cannot_connect(o, "TLS: " + openssl_reasons());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);  // a close is a close
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_default_passwd_cb(ctx.get(), [](char*, int, int, void*) { return 0; });
  const bool loaded =
      t.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx.get()) == 1
                        : SSL_CTX_load_verify_locations(ctx.get(), t.ca_file.c_str(), nullptr) == 1;
  if (!loaded) {
    cannot_connect(o, "TLS: cannot load the CA certificates from " +
                          (t.ca_file.empty() ? std::string("the system store") : t.ca_file) + ": " +
                          openssl_reasons());
  }
  if (!t.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), t.cert_file.c_str()) != 1) {
      cannot_connect(
          o, "TLS: cannot load the client certificate " + t.cert_file + ": " + openssl_reasons());
    }
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), t.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx.get()) != 1) {
      cannot_connect(o, "TLS: cannot use the client key " + t.key_file + ": " + openssl_reasons());
    }
  }
  return ctx;
}

bool is_ip_address(const std::string& name) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, name.c_str(), buffer) == 1;
}

class TlsTransport final : public Transport {
 public:
  TlsTransport(int fd, std::string where, std::unique_ptr<SSL, FreeSsl> ssl, bool client_cert)
      : Transport(fd, std::move(where)), ssl_(std::move(ssl)), client_cert_(client_cert) {}

  void write(std::string_view data) override {
    while (!data.empty()) {
      std::size_t n = 0;
      ERR_clear_error();
      const int rc = SSL_write_ex(ssl_.get(), data.data(), data.size(), &n);
      if (rc != 1) fail(rc, "sending commands");
      data.remove_prefix(n);
    }
  }

  // Verifies the server (its certificate chain and name) in the TLS handshake.
  void handshake(const Options& o) {
    BIO* bio = BIO_new(socket_bio());
    if (bio == nullptr) cannot_connect(o, "TLS: " + openssl_reasons());
    BIO_set_data(bio, &fd_);
    BIO_set_init(bio, 1);
    SSL* ssl = ssl_.get();
    SSL_set_bio(ssl, bio, bio);
    const std::string& name = o.tls.server_name.empty() ? o.host : o.tls.server_name;
    if (is_ip_address(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
    } else {
      // SNI (SSL_set_tlsext_host_name, a macro with a C cast).
      SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(name.c_str()));
      SSL_set1_host(ssl, name.c_str());
    }
    ERR_clear_error();
    const int rc = SSL_connect(ssl);
    if (rc == 1) return;
    const int saved_errno = errno;
    const long verified = SSL_get_verify_result(ssl);
    std::string why;
    if (verified != X509_V_OK) {
      why = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verified);
      if (verified == X509_V_ERR_HOSTNAME_MISMATCH || verified == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        why += " (expected " + name + "; set redis.tls.server_name to the name in the certificate)";
      }
    } else {
      const int error = SSL_get_error(ssl, rc);
      why = openssl_reasons();
      if (why.empty()) {
        why = error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? "timed out"
              : saved_errno != 0 ? errno_text(saved_errno)
                                 : "the server closed the connection";
      }
    }
    cannot_connect(o, "TLS handshake failed: " + why);
  }

  std::size_t read(char* buffer, std::size_t size) override {
    std::size_t n = 0;
    ERR_clear_error();
    const int rc = SSL_read_ex(ssl_.get(), buffer, size, &n);
    if (rc != 1) fail(rc, "reading a reply");
    answered_ = true;
    return n;
  }

 private:
  std::unique_ptr<SSL, FreeSsl> ssl_;
  bool client_cert_;       // one was presented
  bool answered_ = false;  // the server has sent something since the handshake

  // With TLS 1.3 a server checks the client's certificate after the handshake and resets
  // the connection, often before its alert can be read: say what that usually means.
  std::string hint() const {
    if (answered_ || client_cert_) return "";
    return " (the server dropped the connection before its first reply: does the server "
           "require a client certificate? (redis.tls.cert_file and key_file))";
  }

  [[noreturn]] void fail(int rc, const char* doing) {
    const int saved_errno = errno;
    const std::string at = where_ + ": " + doing + ": ";
    switch (SSL_get_error(ssl_.get(), rc)) {
      case SSL_ERROR_WANT_READ:
      case SSL_ERROR_WANT_WRITE:
        throw TimeoutError(at + "timed out");
      case SSL_ERROR_ZERO_RETURN:
        throw ClosedError(at + "the server closed the connection" + hint());
      case SSL_ERROR_SYSCALL: {
        std::string reasons = openssl_reasons();
        if (reasons.empty() && saved_errno == 0) {
          throw ClosedError(at + "the server closed the connection" + hint());
        }
        throw ConnectionError(at + (reasons.empty() ? errno_text(saved_errno) : reasons) + hint());
      }
      default:  // a TLS alert (e.g. "tlsv13 alert certificate required"), a protocol error
        throw ConnectionError(at + "TLS: " + openssl_reasons());
    }
  }
};

std::unique_ptr<Transport> tls_over(Socket& socket, const Options& o) {
  auto ctx = tls_context(o);
  std::unique_ptr<SSL, FreeSsl> ssl(SSL_new(ctx.get()));
  if (!ssl) cannot_connect(o, "TLS: " + openssl_reasons());
  auto t = std::make_unique<TlsTransport>(socket.release(), "redis " + endpoint(o), std::move(ssl),
                                          !o.tls.cert_file.empty());
  t->handshake(o);
  return t;
}

}  // namespace

std::unique_ptr<Transport> Transport::open(const Options& o) {
  Socket socket(o.unix_path.empty() ? connect_tcp(o) : connect_unix(o));
  if (!o.tls.enabled) {
    return std::make_unique<PlainTransport>(socket.release(), "redis " + endpoint(o));
  }
  set_socket_timeout(socket.fd, o.connect_timeout);  // for each read and write of the handshake
  return tls_over(socket, o);
}

Transport::~Transport() {
  if (fd_ >= 0) ::close(fd_);
}

void Transport::set_timeout(Millis timeout) {
  set_socket_timeout(fd_, timeout);
}

}  // namespace bk::redis
