// A cursor is base64url of its NUL-separated fields (board names, period names and ids and
// member ids never hold NUL) followed by their HMAC-SHA256 (32 bytes) under the cursor key.
#include "api/cursor.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <utility>
#include <vector>

#include "api/split.h"
#include "core/error.h"
#include "core/validate.h"

namespace bk::api {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
// c1 was signed with an unkeyed checksum and did not name the board: no longer accepted.
constexpr std::string_view kVersion = "c2";
constexpr std::size_t kMacBytes = 32;
constexpr std::size_t kMaxCursorChars = 2048;  // a 512-byte member's is about 800
constexpr std::string_view kNotOurs =
    "cursor is not one that this deployment handed out (altered, truncated, made up, or from "
    "an older version)";

std::string mac_of(std::string_view key, std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac.data(),
           &len) == nullptr ||
      len != kMacBytes) {
    throw Error("cursor: HMAC-SHA256 failed in OpenSSL");
  }
  return std::string(reinterpret_cast<const char*>(mac.data()), len);
}

bool same_mac(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::int64_t> to_int(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::string where(std::string_view board, std::string_view period, std::string_view id) {
  return std::string(board) + " " + std::string(period) + " " + std::string(id);
}

std::string body(const service::PeriodRef& ref, const service::PageMark& mark) {
  const auto& s = mark.row;
  std::string out(kVersion);
  for (const std::string& field :
       {ref.board, ref.spec->name, ref.period.id, std::to_string(mark.position), s.member,
        std::to_string(s.points),
        s.achieved_at ? std::to_string(to_epoch_ms(*s.achieved_at)) : std::string()}) {
    out += '\0';
    out += field;
  }
  return out;
}

// The fields of an authentic cursor's body as a mark, or why they are not one of `ref`.
DecodedCursor mark_of(const service::PeriodRef& ref, std::string_view text) {
  const auto f = split(text, '\0');
  if (f.size() != 8 || f[0] != kVersion) return {std::nullopt, std::string(kNotOurs)};
  if (f[1] != ref.board || f[2] != ref.spec->name || f[3] != ref.period.id) {
    return {std::nullopt, "cursor is of a page of " + where(f[1], f[2], f[3]) + ", not of " +
                              where(ref.board, ref.spec->name, ref.period.id)};
  }
  const auto position = to_int(f[4]);
  const auto points = to_int(f[6]);
  const auto ms = f[7].empty() ? std::optional<std::int64_t>(0) : to_int(f[7]);
  if (!position || *position < 1 || !points || !ms) return {std::nullopt, std::string(kNotOurs)};
  // Signed, so written by us; checked anyway, as a member that is not UTF-8 would reach
  // PostgreSQL, which refuses to compare it.
  if (auto problem = member_problem(f[5])) return {std::nullopt, "cursor: " + *problem};
  service::PageMark mark{*position, service::Standing{0, std::string(f[5]), *points, {}}};
  if (!f[7].empty()) mark.row.achieved_at = from_epoch_ms(*ms);
  return {std::move(mark), ""};
}

}  // namespace

CursorKey::CursorKey(std::function<std::string()> provider) : provider_(std::move(provider)) {}

std::string CursorKey::get() const {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (key_) return *key_;
  }
  std::string key;  // asked without the lock: a slow PostgreSQL holds up only its callers
  try {
    key = provider_();
  } catch (const Error& e) {
    if (e.transient()) throw;
    throw Error(std::string("the cursor key cannot be had: ") + e.what());
  }
  if (key.size() < kMinCursorKeyBytes) {
    throw Error("the cursor key is " + std::to_string(key.size()) + " bytes, fewer than " +
                std::to_string(kMinCursorKeyBytes));
  }
  const std::lock_guard<std::mutex> lock(mu_);
  if (!key_) key_ = std::move(key);
  return *key_;
}

std::string base64url(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : bytes) {
    acc = (acc << 8) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63];
  return out;
}

std::optional<std::string> unbase64url(std::string_view text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    const std::size_t v = kAlphabet.find(c);
    if (v == std::string_view::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // A length no encoder makes (one symbol left over), or stray bits set: not ours.
  if (bits >= 6 || (acc & ((1U << bits) - 1)) != 0) return std::nullopt;
  return out;
}

std::string encode_cursor(const service::PeriodRef& ref, const service::PageMark& mark,
                          std::string_view key) {
  const std::string b = body(ref, mark);
  return base64url(b + mac_of(key, b));
}

DecodedCursor decode_cursor(const service::PeriodRef& ref, std::string_view cursor,
                            std::string_view key) {
  if (cursor.size() > kMaxCursorChars) return {std::nullopt, std::string(kNotOurs)};
  const auto raw = unbase64url(cursor);
  if (!raw || raw->size() <= kMacBytes) return {std::nullopt, std::string(kNotOurs)};
  const std::string_view text = std::string_view(*raw).substr(0, raw->size() - kMacBytes);
  if (!same_mac(mac_of(key, text), std::string_view(*raw).substr(text.size()))) {
    return {std::nullopt, std::string(kNotOurs)};
  }
  return mark_of(ref, text);
}

}  // namespace bk::api
