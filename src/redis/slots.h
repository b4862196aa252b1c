// Redis Cluster's key space: which of the 16,384 hash slots a key belongs to, and which
// argument of a command is the key it is routed by.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk::redis {

constexpr int kClusterSlots = 16384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the checksum Redis Cluster uses.
std::uint16_t crc16(std::string_view data);

// The key's hash tag as Redis Cluster reads it: what lies between the first '{' and the next
// '}', when that is not empty; "" when the key has none. Keys with one tag share a slot.
std::string_view hash_tag(std::string_view key);

// The key's slot: CRC16 mod 16384 of its hash tag, or of the whole key when it has none.
int key_slot(std::string_view key);

// The key a command is routed by (its first key), or nullopt for a command without one
// (PING, SCRIPT LOAD, INFO, an EVALSHA of no keys, ...).
std::optional<std::string_view> routing_key(const std::vector<std::string>& args);

}  // namespace bk::redis
