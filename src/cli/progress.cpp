// The line: "archiving points daily 2026-11-22: 120000 / 1000000 rows (12%), 40000 rows/s".
#include "cli/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/logging.h"

namespace bk::cli {

lifecycle::ArchiveProgressFn archive_progress_display() {
  if (log_format() != Format::text || ::isatty(STDERR_FILENO) == 0) return {};
  using Clock = std::chrono::steady_clock;
  struct State {
    bool started = false;
    bool shown = false;
    bool merging = false;
    Clock::time_point start, last;
  };
  auto state = std::make_shared<State>();
  return [state](const lifecycle::ArchiveProgress& p) {
    const auto now = Clock::now();
    if (p.done) {
      if (state->shown) std::fputs("\r\033[K", stderr);  // leave the terminal as it was
      *state = State{};
      return;
    }
    if (!state->started) {
      state->started = true;
      state->start = state->last = now;
      return;
    }
    // The merge's line is always shown: it may be the longest part of a big archive.
    const bool merge_starts = p.merging && !state->merging;
    if (!merge_starts && state->shown && now - state->last < std::chrono::milliseconds{500}) return;
    state->last = now;
    state->shown = true;
    state->merging = p.merging;
    const auto& t = *p.target;
    if (p.merging) {
      std::fprintf(stderr,
                   "\r\033[Karchiving %s %s %s: merging %lld hot members with up to %lld cold "
                   "rows in PostgreSQL",
                   t.board.c_str(), t.spec->name.c_str(), t.period.id.c_str(),
                   static_cast<long long>(p.hot_copied), static_cast<long long>(p.cold_total));
    } else {
      const double seconds = std::chrono::duration<double>(now - state->start).count();
      const double rate = seconds > 0 ? static_cast<double>(p.hot_copied) / seconds : 0;
      const double percent = p.hot_total > 0 ? 100.0 * static_cast<double>(p.hot_copied) /
                                                   static_cast<double>(p.hot_total)
                                             : 0;
      std::fprintf(
          stderr, "\r\033[Karchiving %s %s %s: %lld / %lld hot members copied (%.0f%%), %.0f/s",
          t.board.c_str(), t.spec->name.c_str(), t.period.id.c_str(),
          static_cast<long long>(p.hot_copied), static_cast<long long>(p.hot_total), percent, rate);
    }
    std::fflush(stderr);
  };
}

}  // namespace bk::cli
