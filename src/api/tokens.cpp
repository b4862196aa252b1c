// serve's token snapshot and store (api/tokens.h).
#include "api/tokens.h"

#include <openssl/sha.h>

#include <array>
#include <atomic>

namespace bk::api {
namespace {

// Every byte compared whatever differs first.
bool same(const std::string& token, std::string_view given) {
  unsigned char diff = token.size() == given.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

template <typename T, typename Name>
std::vector<std::uint64_t> ids_of(const std::vector<T>& tokens, Name name) {
  std::vector<std::uint64_t> ids;
  ids.reserve(tokens.size());
  for (const T& t : tokens) ids.push_back(token_id(name(t)));
  return ids;
}

}  // namespace

std::uint64_t token_id(std::string_view token) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest.data());
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < 8; ++i) id = id << 8 | digest[i];
  return id == 0 ? 1 : id;  // 0 is no token's
}

TokenSnapshot::TokenSnapshot(Tokens tokens)
    : tokens_(std::move(tokens)),
      read_ids_(ids_of(tokens_.read, [](const std::string& t) { return t; })),
      admin_ids_(ids_of(tokens_.admin, [](const std::string& t) { return t; })),
      write_ids_(ids_of(tokens_.write, [](const WriteToken& t) { return t.token; })) {}

Caller TokenSnapshot::identify(std::string_view given) const {
  Caller found;
  // No early return: every token is compared, whichever matches.
  for (std::size_t i = 0; i < tokens_.read.size(); ++i) {
    if (same(tokens_.read[i], given)) found = {TokenKind::read, read_ids_[i], nullptr};
  }
  for (std::size_t i = 0; i < tokens_.admin.size(); ++i) {
    if (same(tokens_.admin[i], given)) found = {TokenKind::admin, admin_ids_[i], nullptr};
  }
  for (std::size_t i = 0; i < tokens_.write.size(); ++i) {
    if (same(tokens_.write[i].token, given)) {
      found = {TokenKind::write, write_ids_[i], &tokens_.write[i]};
    }
  }
  return found;
}

TokenStore::TokenStore(Tokens tokens)
    : current_(std::make_shared<const TokenSnapshot>(std::move(tokens))) {}

std::shared_ptr<const TokenSnapshot> TokenStore::current() const {
  return std::atomic_load(&current_);
}

void TokenStore::replace(Tokens tokens) {
  std::atomic_store(&current_, std::shared_ptr<const TokenSnapshot>(
                                   std::make_shared<const TokenSnapshot>(std::move(tokens))));
}

}  // namespace bk::api
