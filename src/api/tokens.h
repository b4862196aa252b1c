// serve's bearer tokens in one place: a snapshot of every kind (read, admin, write with its
// boards) that never changes once made, and the store holding the current one, which a reload
// swaps whole (readers never block and never see half of a reload).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bk::api {

// A write token and the boards it may write: globs (core/validate.h); empty: every board.
struct WriteToken {
  std::string token;
  std::vector<std::string> boards{};
};

// Every token serve takes, by kind. Each token is of one kind (the loaders, http/tokens.h,
// refuse one listed as two).
struct Tokens {
  std::vector<std::string> read{};   // empty: reads need no token
  std::vector<std::string> admin{};  // empty: the admin routes answer 403
  std::vector<WriteToken> write{};   // empty: writes are off
};

enum class TokenKind { none, read, admin, write };

// Who a bearer token is: its kind and an identity that is no secret (the first 8 bytes of
// the token's SHA-256), the same for the same token across reloads: what rate limits count
// by. kind none: no token of ours (id 0).
struct Caller {
  TokenKind kind = TokenKind::none;
  std::uint64_t id = 0;
  const WriteToken* write = nullptr;  // kind write: its entry (valid as long as the snapshot)
};

class TokenSnapshot {
 public:
  explicit TokenSnapshot(Tokens tokens);
  const Tokens& tokens() const { return tokens_; }
  // Which of the tokens `given` is, every byte of every token compared whatever differs
  // first: the time taken says nothing of the tokens.
  Caller identify(std::string_view given) const;

 private:
  Tokens tokens_;
  std::vector<std::uint64_t> read_ids_, admin_ids_, write_ids_;
};

// The current snapshot. current() and replace() may run on any threads at once.
class TokenStore {
 public:
  explicit TokenStore(Tokens tokens = {});
  std::shared_ptr<const TokenSnapshot> current() const;
  void replace(Tokens tokens);

 private:
  std::shared_ptr<const TokenSnapshot> current_;  // only through std::atomic_load/store
};

// A token's identity (see Caller).
std::uint64_t token_id(std::string_view token);

}  // namespace bk::api
