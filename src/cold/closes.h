// Close notices as PostgreSQL keeps them (sql/014_period_closes.sql): the notice an archive
// writes in its own transaction (history.cpp calls write_close_notice), and what tick's
// publisher and the `closes` command read and mark. Shares the cold store's connection.
#pragma once
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/types.h"
#include "core/time.h"

namespace pqxx {
class transaction_base;
}

namespace bk::cold {

namespace pg {
struct Link;
}

struct CloseNotice {
  std::int64_t seq = 0;  // its entry's id in the stream is <seq>-1
  PeriodKey key;
  Instant start{};
  Instant end{};
  std::int64_t members = 0;  // the period's history rows
  // Members per tier, a JSON object with every tier of the board's rules when archived (zeros
  // too; members in no tier are not counted), {} on a board without tiers.
  std::string tiers = "{}";
  bool hot_lost = false;  // archived after Redis had lost the period's data
  Instant archived_at{};
  std::string stream;                     // the Redis stream it goes to
  std::optional<Instant> published_at{};  // null: not yet seen in its stream
  // A league period: per division {"promoted", "stayed", "relegated"} (JSON); else none.
  std::optional<std::string> league{};
};

// Members per tier as a JSON object, {"gold": 12, ...}, in the rules' order ({} for none): the
// notice's `tiers` and the archived period's (sql/016_period_tiers.sql).
std::string tier_counts_json(const std::vector<TierCount>& tiers);

// The channel of the archive's NOTIFY (payload: the notice's seq): "<schema>_closes", the
// schema cut to 56 bytes so the name fits PostgreSQL's 63.
std::string closes_channel(const std::string& schema);

// Within an archive's transaction, after its periods row: takes the notices' lock (held until
// the transaction ends, so notices commit in seq order), writes the period's notice and its
// NOTIFY. `q`: the quoted schema. Returns the notice's seq.
struct ArchivedClose {
  const PeriodKey& key;
  Instant start{};
  Instant end{};
  std::int64_t members = 0;
  bool hot_lost = false;
  const std::string& stream;
  // Per tier of the board's rules, as the merge counted them (History::Counts::tiers); empty
  // without tiers.
  const std::vector<TierCount>& tiers;
  // A league period's counts per division (History::Counts::league); "" for other boards.
  const std::string& league;
};
std::int64_t write_close_notice(pqxx::transaction_base& txn, const std::string& schema,
                                const ArchivedClose& close);

class Closes {
 public:
  explicit Closes(std::shared_ptr<pg::Link> link);

  // Every stream some notice names.
  std::vector<std::string> streams();
  // The largest seq any notice has (0: none).
  std::int64_t last_seq();
  // Marks published the pending notices of `stream` with seq <= `through` (their entries are
  // in the stream: a tick was stopped between its XADD and this bookkeeping). How many.
  std::int64_t mark_published_through(const std::string& stream, std::int64_t through);
  // Up to `limit` notices of `stream` with seq > `after`, in seq order.
  std::vector<CloseNotice> of_stream(const std::string& stream, std::int64_t after,
                                     std::int64_t limit);
  void mark_published(std::int64_t seq);
  // The SQL that reads the period's whole standings from the history view, for the entry.
  std::string history_sql(const PeriodKey& key) const;

  struct Counts {
    std::int64_t pending = 0;    // not yet published
    std::int64_t published = 0;  // published (ever: a counter)
  };
  Counts counts();

  // For `closes`: up to `limit` notices in seq order, with after_seq < seq < before_seq and
  // archived at or after `since` (when given); `newest`: the last `limit` of them instead of
  // the first.
  struct Query {
    std::int64_t after_seq = 0;
    std::int64_t before_seq = INT64_MAX;
    std::optional<Instant> since{};
    std::int64_t limit = 100;
    bool newest = false;
  };
  std::vector<CloseNotice> page(const Query& query);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
