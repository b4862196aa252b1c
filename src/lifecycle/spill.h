// Spill (protocol 2): everything ranked past a board period's hot buffer moves to the cold
// tier; a member leaves Redis only after its cold row is committed, and only if its score
// did not change meanwhile.
#pragma once
#include <cstdint>
#include <string>

#include "cold/cold_store.h"
#include "config/config.h"
#include "hot/board_scripts.h"
#include "redis/connection.h"

namespace bk::lifecycle {

struct SpillStats {
  std::int64_t hot_before = 0;     // members in the hot key when the spill began
  std::int64_t spilled = 0;        // moved to the cold tier and removed from Redis
  std::int64_t kept_in_place = 0;  // written to the cold tier but updated meanwhile: stay hot
};

// One period of one board, with the board's config and the period's spec: what a spill or an
// archive works on.
struct BoardPeriod {
  const BoardConfig* config = nullptr;
  const PeriodSpec* spec = nullptr;
  std::string board;
  Period period;
};

// Members per cold-tier transaction (and per read from Redis) when not told otherwise: the
// default of tick's --chunk.
inline constexpr std::int64_t kDefaultChunk = 5000;

// What a spill or an archive of one board period works on and with.
struct PeriodJob {
  redis::Connection& redis;
  hot::BoardScripts& hot;
  cold::ColdStore& cold;
  BoardPeriod target;
  std::int64_t chunk = kDefaultChunk;  // members per cold-tier transaction / per read from Redis
  bool dry_run = false;                // change nothing; say what would be done
};

// Moves the members ranked past `keep` to the cold tier in chunks. With dry_run nothing
// changes and `spilled` says how many would move.
SpillStats spill_beyond(const PeriodJob& job, std::int64_t keep);

}  // namespace bk::lifecycle
