// One client connection of the HTTP server (http/server.cpp): its phases, each under a
// deadline, from a request's head to its answer. Internal to the server.
#pragma once
#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "http/parts.h"
#include "http/server_core.h"

namespace bk::http::detail {

namespace beast_http = boost::beast::http;

// Reads a request (head, then body, each under its deadline), has it answered (inline or
// by a worker), writes the answer, and goes on with the next request on the same
// connection, pipelined ones included, until either side closes.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server& server, tcp::socket socket);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start();
  // Over the connection limit: its head is read within kOverLimitHead; a probe is answered,
  // anything else gets a 503; then it closes.
  void start_over_limit();
  // The server stops: a connection with nothing to answer closes now, the others after
  // their answer (which says Connection: close).
  void on_stop();
  // Since when it has been waiting for a request (idle after an answer, or a head still
  // arriving); nullopt while it reads a body, works, writes or lingers.
  std::optional<std::chrono::steady_clock::time_point> waiting_since() const;
  void close();

 private:
  enum class Phase { idle, head, body, working, writing, lingering, closed };
  using Parser = beast_http::request_parser<beast_http::string_body>;
  using Message = beast_http::request<beast_http::string_body>;

  Server& server_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::uint64_t generation_ = 0;  // of the deadline armed last
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  std::size_t body_limit_ = 0;  // the body bound of the request being read
  bool line_ended_ = false;     // the request being read has its request line whole
  Phase phase_ = Phase::head;
  bool reading_ = false;
  bool close_after_write_ = false;
  std::size_t lingered_ = 0;
  parts::Exchange exchange_;
  std::string out_;          // the answer being written
  std::string peer_;         // the client's address
  bool over_limit_ = false;  // accepted beyond max_connections: a probe or a 503
  // What the request in progress holds of the server's Admission, until it is answered.
  struct Share {
    std::string key;
    std::size_t body_bytes = 0;
  };
  std::optional<Share> share_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();  // of phase_

  // A phase and its deadline (none: zero).
  void enter(Phase phase, Millis deadline);
  void on_deadline();

  void read();
  void on_read(const error_code& ec, std::size_t n);
  // Feeds the parser what the buffer holds, as far as it goes.
  void parse();
  bool line_end_in_buffer() const;
  void make_parser();
  parts::Refusal refusal_for(const error_code& ec) const;

  // The head arrived: checked, then the body is waited for. False when refused.
  bool on_head();
  // Whether the request may go on (else it is refused): over the connection limit only a
  // probe; then the server's admit callback; then its share of what clients may hold.
  bool admitted(const Message& m);
  std::optional<parts::Refusal> head_problem(const Message& m);
  std::optional<parts::Refusal> body_problem(const Message& m, bool post);
  // The request's share of what clients may hold (Options::body_bytes_in_flight...), taken;
  // or why it cannot be.
  std::optional<parts::Refusal> take_share(const Request& head);
  void release_share();
  // A client that waits for "100 Continue" before it sends the body (curl does, above 1 KiB)
  // gets it at once; the socket is fresh and non-blocking, so a short write would be odd.
  void expect_continue(const Message& m);

  void dispatch();
  Request take_request();
  Request head_of(const Message& m) const;

  void answer(const Response& response);
  // An error of the HTTP layer: answered as JSON, then the connection closes (what is left
  // of the request cannot be told from the next one).
  void refuse(parts::Refusal refusal);
  void refuse_over_limit();
  void refuse_with(const Response& r);
  void write(std::string text, bool close);
  void on_written(const error_code& ec);

  // Closing right after an answer would reset the connection while the client still sends
  // (the rest of a refused body), and a reset can destroy the answer before it is read:
  // so the sending side is shut, and what still arrives is read and dropped for a while.
  void linger();
  void on_linger_read(const error_code& ec, std::size_t n);
};

}  // namespace bk::http::detail
