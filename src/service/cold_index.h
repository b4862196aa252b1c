// Cold ranks from serve's memory (docs/architecture.md "Cold ranks from memory"): a spilled
// period's cold rows, as of one spill generation, kept in listing order so that counts, ranks,
// pages and neighbourhoods are a binary search and so is a member's row; and the
// process-wide cache of them (ColdIndexes), bounded by a memory budget, least recently used
// periods dropped first, filled by a loader off the request path.
//
// Why a spill generation is enough (hot/spill_remove.lua, tombstones_clear.lua,
// erase_finish.lua, period_reset.lua): every change of a period's cold rows moves :meta's
// `gen`, but for rows a spill commits before it removes their members from Redis, and those
// members are in the stale set until then, so every read skips their rows anyway. A
// rehydration or a removal only enters its member in the stale set (Redis), which reads take
// from Redis as before. And a generation is never seen twice: one that starts after Redis lost
// its data starts at the server's clock.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "service/tiers.h"
#include "service/types.h"

namespace bk::service {

// The spill part of a read_state generation ("<spill gen>:<rehydrate gen>"); empty for "0"
// (Redis has seen no spill of the period since it last lost its data: its rows are not indexed).
std::string spill_generation(const std::string& gen);
// Whether spill generation `a` is older than `b` (decimal numbers without leading zeros).
bool older_generation(const std::string& a, const std::string& b);

// One spill generation of a period's cold rows, immutable once sealed.
class ColdIndex {
 public:
  ColdIndex(cold::PeriodKey period, std::string spill_gen);

  // Building: rows in listing order (a logic_error otherwise), then seal() once.
  void reserve(std::size_t rows, std::size_t name_bytes);
  void add(const std::string& member, std::int64_t encoded);
  void seal();

  const cold::PeriodKey& period() const { return period_; }
  const std::string& spill_gen() const { return spill_gen_; }
  std::int64_t size() const { return static_cast<std::int64_t>(encoded_.size()); }
  // What it holds, in bytes (its arrays' capacities).
  std::size_t bytes() const;

  std::int64_t encoded(std::int64_t i) const { return encoded_[static_cast<std::size_t>(i)]; }
  std::string_view member(std::int64_t i) const;
  // Rows with encoded < e.
  std::int64_t count_better(std::int64_t e) const;
  // Rows listed before (e, m): the position (e, m) has or would have.
  std::int64_t position(std::int64_t e, std::string_view m) const;
  // The position of `member`'s row, if it has one.
  std::optional<std::int64_t> find(std::string_view member) const;

 private:
  cold::PeriodKey period_;
  std::string spill_gen_;
  std::vector<std::int64_t> encoded_;    // listing order
  std::vector<std::uint32_t> name_end_;  // member i's name is names_[end(i-1), end(i))
  std::string names_;
  // Positions in name order (bytes): a member's row by binary search. Not a hash table: names
  // are chosen by the game's clients, and a hash an attacker can collide would make each
  // look-up a scan.
  std::vector<std::uint32_t> by_name_;
};

// A ColdSnapshot answered from an index (its rows carry member and encoded only: the reads
// decode points and times from the encoded score).
std::unique_ptr<ColdSnapshot> snapshot_of(std::shared_ptr<const ColdIndex> index);

// Reads `period`'s cold rows through `reader` in pages, in listing order. nullptr when they
// would take more than `max_bytes`.
std::shared_ptr<ColdIndex> read_index(ColdSnapshot& reader, const cold::PeriodKey& period,
                                      const std::string& spill_gen, std::size_t max_bytes);

// The indexes of many periods, shared by serve's workers.
class ColdIndexes {
 public:
  explicit ColdIndexes(std::size_t budget_bytes) : budget_(budget_bytes) {}

  // The index of the period whose :meta key is `meta` as of `spill_gen`, or nullptr: then its
  // load is asked for (once; not again for kRetryAfter after a failed one, never for a
  // generation too large for the budget).
  std::shared_ptr<const ColdIndex> find(const PeriodRef& ref, const std::string& meta,
                                        const std::string& spill_gen);
  bool has(const std::string& meta, const std::string& spill_gen) const;

  // The next period to load, waiting up to `wait`; nullopt when none (or stopped). A period
  // taken may be asked for again while it loads (a load that finds its index kept does nothing).
  std::optional<PeriodRef> next(std::chrono::milliseconds wait);
  bool stopped() const;
  // Keeps `index` (dropping the least recently used others to stay within the budget).
  void install(const std::string& meta, std::shared_ptr<const ColdIndex> index);
  // A load that ended without an index: nothing to load (not spilled, or the generation moved
  // meanwhile), too large for the budget (not asked again for that generation), or failed.
  enum class Outcome { nothing, too_large, failed };
  void not_loaded(const std::string& meta, const std::string& spill_gen, Outcome outcome);
  void stop();

  std::size_t budget() const { return budget_; }
  struct Stats {
    std::size_t bytes = 0;
    std::size_t periods = 0;
    std::int64_t hits = 0, misses = 0, loads = 0, evictions = 0, failures = 0;
  };
  Stats stats() const;

  static constexpr std::chrono::seconds kRetryAfter{5};
  static constexpr std::size_t kMaxRefused = 4096;

 private:
  struct Entry {
    std::shared_ptr<const ColdIndex> index;
    std::list<std::string>::iterator used;  // its place in lru_
  };
  struct Refused {
    std::string spill_gen;
    std::chrono::steady_clock::time_point until;
  };
  const std::size_t budget_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopped_ = false;
  std::unordered_map<std::string, Entry> entries_;  // by :meta key
  std::list<std::string> lru_;                      // most recently used first
  std::unordered_map<std::string, Refused> refused_;
  std::list<std::pair<std::string, PeriodRef>> wanted_;      // :meta key, period
  std::unordered_map<std::string, std::string> wanted_gen_;  // :meta key -> queued, spill gen
  Stats stats_;

  void drop(std::unordered_map<std::string, Entry>::iterator it);
  void ask(const PeriodRef& ref, const std::string& meta, const std::string& spill_gen);
};

}  // namespace bk::service
