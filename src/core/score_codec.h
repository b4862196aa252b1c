// Points and the tie-break time packed into one integer that a double holds exactly.
// Smaller encoded values rank higher, so a ZSET read in ascending order (ZRANGE) is the
// listing order, and equal scores fall back to member bytes ascending as the contract says.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/time.h"

namespace bk {

enum class Order { desc, asc };  // desc: more points rank higher
enum class TieBreak { earliest, latest, none };

inline constexpr std::int64_t kMaxExactInteger = 9007199254740992;  // 2^53

// Everything that fixes one board period's encoding. The Lua update script receives the
// same numbers and computes the same formula.
struct ScoreLayout {
  std::int64_t min_points = 0;
  std::int64_t max_points = 0;
  Order order = Order::desc;
  TieBreak tie = TieBreak::earliest;
  Millis resolution{1};         // 1ms or 1000ms
  std::int64_t span_units = 0;  // the time part lies in [0, span_units]; 0 when tie is none

  // Encoded = rank_points * (span_units + 1) + time_part.
  std::int64_t time_slots() const { return span_units + 1; }
};

// The layout for a board whose periods last at most `longest`.
ScoreLayout make_layout(std::int64_t min_points, std::int64_t max_points, Order order, TieBreak tie,
                        Millis resolution, Millis longest);

// Bits the largest encoded value needs; at most 53 fits.
int bits_needed(const ScoreLayout& layout);

// Why the layout does not fit 53 bits and what to change, or nullopt when it fits.
std::optional<std::string> budget_problem(const ScoreLayout& layout);

struct Decoded {
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;  // absent for tie_break: none
};

class ScoreCodec {
 public:
  explicit ScoreCodec(ScoreLayout layout) : layout_(layout) {}

  // Throws OutOfRangeError when points are outside the range or `achieved` outside the
  // period's encodable time span.
  std::int64_t encode(std::int64_t points, Instant achieved, Instant period_start) const;
  // Throws OutOfRangeError for a value this layout never produces.
  Decoded decode(std::int64_t encoded, Instant period_start) const;

  const ScoreLayout& layout() const { return layout_; }

 private:
  ScoreLayout layout_;
};

}  // namespace bk
