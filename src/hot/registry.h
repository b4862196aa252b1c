// The boards Redis knows (<prefix>:boards, a SET) and each board's registry of live periods
// (<prefix>:{<board>}:registry, a ZSET from "<period>:<period-id>" to the period's end in
// epoch ms): typed reads and writes, so callers above `hot` spell no Redis command.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "hot/keys.h"
#include "redis/connection.h"

namespace bk::hot {

// Adds `board` to the set of boards Redis knows (before its first write, so tick finds it).
void add_board(redis::Connection& conn, std::string_view prefix, const std::string& board);

// The boards Redis knows, in no particular order.
std::vector<std::string> known_boards(redis::Connection& conn, std::string_view prefix);

// One live period of a board's registry.
struct LivePeriod {
  std::string period;     // the period's name ("daily", a cron period's name)
  std::string period_id;  // its id ("2027-01-04")
  Instant end;            // the period's end
  std::string member() const { return registry_member(period, period_id); }
};

// The board's live periods, oldest end first (ties by name).
std::vector<LivePeriod> live_periods(redis::Connection& conn, const BoardKeys& keys);

// "<period>:<period-id>" split at its first colon (a period's name has none); a member
// without a colon is all period and no id.
LivePeriod split_registry_member(const std::string& member);

}  // namespace bk::hot
