// Tick's steps on a league period (docs/architecture.md "Leagues"): opening its cohorts (the
// divisions cache made current, the seats restored after Redis lost them, the waiting members
// seated) and checkpointing its seats into PostgreSQL. tick.cpp runs them on the oldest open
// period of a league board only; archive.cpp runs them once more after freezing a period, so
// the close sees every seat.
#pragma once
#include <cstdint>

#include "lifecycle/spill.h"

namespace bk::lifecycle {

// Opens the period's cohorts unless they are open at the board's close count. Throws when
// Redis or PostgreSQL fail (the next tick tries again: every step is safe to repeat).
void open_cohorts(const PeriodJob& job);
// Copies the seats taken since the last checkpoint to league_seats; how many.
std::int64_t checkpoint_seats(const PeriodJob& job);

}  // namespace bk::lifecycle
