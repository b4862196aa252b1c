// A cursor is base64url of NUL-separated fields (member ids never hold NUL) and a checksum.
#include "api/cursor.h"
#include "api/split.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <vector>

namespace bk::api {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::string_view kVersion = "c1";

// FNV-1a, 64 bits, as 16 hex digits.
std::string checksum(std::string_view text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4)
    out[static_cast<std::size_t>(i)] = "0123456789abcdef"[h & 15];
  return out;
}

std::optional<std::int64_t> to_int(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::string body(const service::PeriodRef& ref, const service::PageMark& mark) {
  const auto& s = mark.row;
  std::string out(kVersion);
  for (const std::string& field :
       {ref.spec->name, ref.period.id, std::to_string(mark.position), s.member,
        std::to_string(s.points),
        s.achieved_at ? std::to_string(to_epoch_ms(*s.achieved_at)) : std::string()}) {
    out += '\0';
    out += field;
  }
  return out;
}

}  // namespace

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

std::string encode_cursor(const service::PeriodRef& ref, const service::PageMark& mark) {
  const std::string b = body(ref, mark);
  return base64url(b + '\0' + checksum(b));
}

std::optional<service::PageMark> decode_cursor(const service::PeriodRef& ref,
                                               std::string_view cursor) {
  if (cursor.size() > 2048) return std::nullopt;
  const auto raw = unbase64url(cursor);
  if (!raw) return std::nullopt;
  const std::size_t cut = raw->rfind('\0');
  if (cut == std::string::npos) return std::nullopt;
  const std::string_view text(*raw);
  if (checksum(text.substr(0, cut)) != text.substr(cut + 1)) return std::nullopt;
  const auto f = split(text.substr(0, cut), '\0');
  if (f.size() != 7 || f[0] != kVersion || f[1] != ref.spec->name || f[2] != ref.period.id) {
    return std::nullopt;
  }
  const auto position = to_int(f[3]);
  const auto points = to_int(f[5]);
  if (!position || *position < 1 || !points || f[4].empty()) return std::nullopt;
  service::PageMark mark{*position, service::Standing{0, std::string(f[4]), *points, {}}};
  if (!f[6].empty()) {
    const auto ms = to_int(f[6]);
    if (!ms) return std::nullopt;
    mark.row.achieved_at = from_epoch_ms(*ms);
  }
  return mark;
}

}  // namespace bk::api
