// How many ticks in a row found a board period busy (another tick spilling or archiving
// it): a claim that is never released shows as a streak that keeps growing. Kept per board
// in <prefix>:{<board>}:busy, a HASH from registry member ("<period>:<period-id>") to count.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "hot/keys.h"
#include "redis/connection.h"

namespace bk::hot {

// The board's periods that have a streak (usually none: one HGETALL of a missing key).
std::map<std::string, std::int64_t> busy_streaks(redis::Connection& conn, const BoardKeys& keys);
// One more tick found the period busy; returns the streak now.
std::int64_t note_busy(redis::Connection& conn, const BoardKeys& keys,
                       const std::string& registry_member);
// A tick got to the period: its streak ends.
void end_busy(redis::Connection& conn, const BoardKeys& keys, const std::string& registry_member);

}  // namespace bk::hot
