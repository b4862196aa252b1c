// Redis Cluster's key space: CRC16 slots, hash tags and the routing key of a command.
#include "redis/slots.h"

#include <array>
#include <cctype>
#include <cstdlib>

namespace bk::redis {
namespace {

constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) {
    unsigned crc = i << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000U) != 0 ? (crc << 1) ^ 0x1021U : crc << 1;
    t[i] = static_cast<std::uint16_t>(crc & 0xFFFFU);
  }
  return t;
}

constexpr std::array<std::uint16_t, 256> kTable = make_table();

bool same_word(std::string_view a, std::string_view upper) {
  if (a.size() != upper.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != upper[i]) return false;
  }
  return true;
}

}  // namespace

std::uint16_t crc16(std::string_view data) {
  std::uint16_t crc = 0;
  for (const char c : data) {
    crc = static_cast<std::uint16_t>((crc << 8) ^
                                     kTable[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xFFU]);
  }
  return crc;
}

std::string_view hash_tag(std::string_view key) {
  const auto open = key.find('{');
  const auto close = open == std::string_view::npos ? open : key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return std::string_view();
  return key.substr(open + 1, close - open - 1);
}

int key_slot(std::string_view key) {
  const std::string_view tag = hash_tag(key);
  return crc16(tag.empty() ? key : tag) & (kClusterSlots - 1);
}

std::optional<std::string_view> routing_key(const std::vector<std::string>& args) {
  if (args.empty()) return std::nullopt;
  const std::string_view name = args[0];
  for (const char* keyless :
       {"PING",    "SCRIPT",  "INFO",     "CLIENT",   "AUTH",     "SELECT",  "TIME",
        "CLUSTER", "COMMAND", "CONFIG",   "DBSIZE",   "FLUSHALL", "FLUSHDB", "KEYS",
        "SCAN",    "ASKING",  "READONLY", "HELLO",    "MULTI",    "EXEC",    "DISCARD",
        "WAIT",    "ECHO",    "QUIT",     "LASTSAVE", "MEMORY",   "LATENCY"}) {
    if (same_word(name, keyless)) return std::nullopt;
  }
  if (same_word(name, "EVAL") || same_word(name, "EVALSHA") || same_word(name, "EVAL_RO") ||
      same_word(name, "EVALSHA_RO") || same_word(name, "FCALL") || same_word(name, "FCALL_RO")) {
    if (args.size() < 4) return std::nullopt;
    const long keys = std::strtol(args[2].c_str(), nullptr, 10);
    return keys > 0 ? std::optional<std::string_view>(args[3]) : std::nullopt;
  }
  if (same_word(name, "XREAD") || same_word(name, "XREADGROUP")) {
    for (std::size_t i = 1; i + 1 < args.size(); ++i) {
      if (same_word(args[i], "STREAMS")) return std::string_view(args[i + 1]);
    }
    return std::nullopt;
  }
  if (same_word(name, "XGROUP") || same_word(name, "XINFO") || same_word(name, "OBJECT")) {
    return args.size() > 2 ? std::optional<std::string_view>(args[2]) : std::nullopt;
  }
  return args.size() > 1 ? std::optional<std::string_view>(args[1]) : std::nullopt;
}

}  // namespace bk::redis
