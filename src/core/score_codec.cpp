// The score encoding. Integer arithmetic only; the 53-bit budget is checked in 128 bits.
#include "core/score_codec.h"

#include "core/duration.h"
#include "core/error.h"

namespace bk {
namespace {
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;
}  // namespace

ScoreLayout make_layout(std::int64_t min_points, std::int64_t max_points, Order order, TieBreak tie,
                        Millis resolution, Millis longest) {
  ScoreLayout l;
  l.min_points = min_points;
  l.max_points = max_points;
  l.order = order;
  l.tie = tie;
  l.resolution = resolution;
  // Instants in [start, start + longest] map to units in [0, ceil(longest / resolution)].
  l.span_units =
      tie == TieBreak::none ? 0 : (longest.count() + resolution.count() - 1) / resolution.count();
  return l;
}

int bits_needed(const ScoreLayout& l) {
  const u128 largest = static_cast<u128>(static_cast<i128>(l.max_points) - l.min_points) *
                           static_cast<u128>(l.time_slots()) +
                       static_cast<u128>(l.span_units);
  int bits = 0;
  for (u128 v = largest; v != 0; v >>= 1) ++bits;
  return bits;
}

std::optional<std::string> budget_problem(const ScoreLayout& l) {
  if (l.min_points > l.max_points) {
    return "min_points (" + std::to_string(l.min_points) + ") is above max_points (" +
           std::to_string(l.max_points) + ")";
  }
  const int bits = bits_needed(l);
  if (bits <= 53) return std::nullopt;
  // The widest points range that still fits with this time span.
  const auto widest = static_cast<std::int64_t>(kMaxExactInteger / l.time_slots()) - 1;
  std::string msg = "points range [" + std::to_string(l.min_points) + ", " +
                    std::to_string(l.max_points) + "] with a tie-break time span of " +
                    format_duration(l.resolution * l.span_units) + " at " +
                    format_duration(l.resolution) + " resolution needs " + std::to_string(bits) +
                    " bits, more than the 53 a score holds exactly; ";
  if (widest >= 0) {
    msg += "narrow the points range to at most " + std::to_string(widest) +
           " wide (e.g. max_points: " + std::to_string(l.min_points + widest) + "), ";
  }
  if (l.resolution.count() < 1000) msg += "or use time_resolution: s, ";
  msg += "or use tie_break: none, or a shorter period";
  return msg;
}

std::int64_t ScoreCodec::encode(std::int64_t points, Instant achieved, Instant period_start) const {
  const ScoreLayout& l = layout_;
  if (points < l.min_points || points > l.max_points) {
    throw OutOfRangeError("points " + std::to_string(points) + " are outside [" +
                          std::to_string(l.min_points) + ", " + std::to_string(l.max_points) + "]");
  }
  const std::int64_t rank_points =
      l.order == Order::desc ? l.max_points - points : points - l.min_points;
  std::int64_t time_part = 0;
  if (l.tie != TieBreak::none) {
    const auto offset = (achieved - period_start).count();
    const std::int64_t units = offset < 0 ? -1 : offset / l.resolution.count();
    if (units < 0 || units > l.span_units) {
      throw OutOfRangeError("time " + format_rfc3339(achieved) +
                            " is outside the period's encodable span");
    }
    time_part = l.tie == TieBreak::earliest ? units : l.span_units - units;
  }
  return rank_points * l.time_slots() + time_part;
}

Decoded ScoreCodec::decode(std::int64_t encoded, Instant period_start) const {
  const ScoreLayout& l = layout_;
  if (encoded < 0) throw OutOfRangeError("negative score " + std::to_string(encoded));
  const std::int64_t rank_points = encoded / l.time_slots();
  const std::int64_t time_part = encoded % l.time_slots();
  if (rank_points > l.max_points - l.min_points) {
    throw OutOfRangeError("score " + std::to_string(encoded) + " is beyond the points range");
  }
  Decoded d;
  d.points = l.order == Order::desc ? l.max_points - rank_points : l.min_points + rank_points;
  if (l.tie != TieBreak::none) {
    const std::int64_t units = l.tie == TieBreak::earliest ? time_part : l.span_units - time_part;
    d.achieved_at = period_start + l.resolution * units;
  }
  return d;
}

}  // namespace bk
