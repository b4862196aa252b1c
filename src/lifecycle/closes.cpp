// The close notices' publisher (see closes.h). Why a notice reaches its stream exactly once,
// however tick is stopped: docs/architecture.md, "Close notices, exactly once".
#include "lifecycle/closes.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/json.h"
#include "core/stop_points.h"
#include "hot/keys.h"

namespace bk::lifecycle {
namespace {

constexpr std::int64_t kPage = 100;  // notices read from PostgreSQL at a time

// A history row's tier in the entry: as the archive froze it in history (null: no rule
// matched, or the board has no tiers).
std::string tier_json(const cold::HistoryRow& row) {
  return row.tier ? json_string(*row.tier) : "null";
}

std::string standing_json(const cold::HistoryRow& h) {
  return JsonLine()
      .num("rank", h.rank)
      .num("position", h.position)
      .str("member", h.member)
      .num("points", h.points)
      .time("achieved_at", h.achieved_at)
      .raw("tier", tier_json(h))
      .raw("name", h.name ? json_string(*h.name) : "null")
      .raw("metadata", h.metadata ? *h.metadata : "null")
      .done();
}

void note_failure(ClosesReport& report, const std::string& what, const Error& e) {
  spdlog::warn("tick: close notices of {}: {} (they stay pending: the next tick publishes them)",
               what, e.what());
  if (!report.error.empty()) return;
  report.error = e.what();
  report.error_backend = e.backend();
}

}  // namespace

ClosesPublisher::ClosesPublisher(const Config& config, redis::Connection& redis,
                                 cold::Closes& closes, cold::History& history)
    : config_(config), redis_(redis), closes_(closes), history_(history) {}

std::string ClosesPublisher::stream_for(const BoardConfig& board, const std::string& key_prefix) {
  return board.closes_stream.empty() ? hot::closes_key(key_prefix) : board.closes_stream;
}

hot::EntryFields ClosesPublisher::entry_of(const cold::CloseNotice& n) {
  const BoardConfig* board = config_.board_for(n.key.board);
  const std::int64_t top_n = board != nullptr ? board->notice_top : kDefaultNoticeTop;
  std::string top = "[";
  for (const cold::HistoryRow& h : history_.history(n.key, top_n)) {
    if (top.size() > 1) top += ",";
    top += standing_json(h);
  }
  top += "]";
  hot::EntryFields fields{{"seq", std::to_string(n.seq)},
                          {"board", n.key.board},
                          {"period", n.key.period},
                          {"period_id", n.key.period_id},
                          {"period_start", format_rfc3339(n.start)},
                          {"period_end", format_rfc3339(n.end)},
                          {"members", std::to_string(n.members)},
                          {"tiers", n.tiers},
                          {"hot_lost", n.hot_lost ? "true" : "false"},
                          {"archived_at", format_rfc3339(n.archived_at)},
                          {"top", top},
                          {"history_sql", closes_.history_sql(n.key)}};
  if (n.league) fields.emplace_back("league", *n.league);  // a league period's moves
  return fields;
}

void ClosesPublisher::run(ClosesReport& report, bool dry_run) {
  if (!dry_run) {
    std::vector<std::string> streams;
    try {
      streams = closes_.streams();
    } catch (const Error& e) {
      note_failure(report, "every stream", e);
    }
    for (const std::string& stream : streams) {
      try {
        publish_stream(stream, report);
      } catch (const Error& e) {
        note_failure(report, "stream '" + stream + "'", e);
      }
    }
  }
  try {
    const cold::Closes::Counts counts = closes_.counts();
    report.pending = counts.pending;
    report.published_total = counts.published;
    report.counted = true;
  } catch (const Error& e) {
    note_failure(report, "counting", e);
  }
}

std::int64_t ClosesPublisher::stream_through(const std::string& stream) {
  const auto top = hot::stream_top(redis_, stream);
  if (!top) return 0;
  // Every notice whose id <seq>-1 is at or below the top was added (or skipped by an operator's
  // XSETID): the top's seq, or one less for an id <seq>-0.
  const std::uint64_t through = top->seq >= 1 ? top->ms : (top->ms == 0 ? 0 : top->ms - 1);
  // Read after the top: every notice in the stream had committed before it got there.
  const std::int64_t last = closes_.last_seq();
  if (through > static_cast<std::uint64_t>(last)) {
    throw Error("stream '" + stream + "' has the id " + top->text() +
                ", beyond every close notice (the last is " + std::to_string(last) +
                "): something else writes to it, or PostgreSQL is older than Redis; its "
                "notices wait (docs/operations.md, close notices)");
  }
  return static_cast<std::int64_t>(through);
}

void ClosesPublisher::publish_stream(const std::string& stream, ClosesReport& report) {
  const std::int64_t through = stream_through(stream);
  report.found += closes_.mark_published_through(stream, through);
  stop_point(StopPoint::publish_marked_through);
  std::int64_t after = through;
  std::int64_t done = 0;
  std::int64_t refed = 0;
  while (done < kMaxPublishedPerTick) {
    const std::vector<cold::CloseNotice> page =
        closes_.of_stream(stream, after, std::min(kPage, kMaxPublishedPerTick - done));
    for (const cold::CloseNotice& n : page) {
      // In seq order, stopping at the first failure (thrown): the stream never gets a notice
      // while an earlier one of it is missing.
      const hot::EntryFields entry = entry_of(n);
      stop_point(StopPoint::publish_before_xadd);
      const bool added =
          hot::add_close_entry(redis_, stream, n.seq, entry) == hot::CloseAdded::added;
      stop_point(StopPoint::publish_after_xadd);
      if (added) {
        ++report.published;
        if (n.published_at) ++refed;
      } else if (!n.published_at) {
        ++report.found;  // another tick added it meanwhile
      }
      if (!n.published_at) closes_.mark_published(n.seq);
      stop_point(StopPoint::mark_done);
      after = n.seq;
      ++done;
    }
    if (static_cast<std::int64_t>(page.size()) < kPage) break;
  }
  report.refed += refed;
  if (refed > 0) {
    spdlog::warn(
        "tick: stream '{}' lacked {} close notices it had held (Redis lost data): added "
        "again with their ids",
        stream, refed);
  }
}

}  // namespace bk::lifecycle
