// The board in PostgreSQL, one connection: schema migrations (migrations.h), the schema's
// owner (ownership.h), the cold tier of open periods (cold_tier.h), profiles (profile_store.h)
// and snapshot reads (cold_reader.h). libpqxx stays behind these headers.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cold/cold_reader.h"
#include "cold/types.h"
#include "core/time.h"

namespace bk::cold {

namespace pg {
struct Link;
}

// One connection to PostgreSQL. Not thread-safe: one per thread. Every libpqxx error that
// means the server is unreachable or went away becomes bk::UnavailableError (exit 3);
// others become bk::Error. A call that finds its connection broken fails so (it is never
// retried silently); the next call connects afresh.
class ColdStore {
 public:
  // Connects. `schema` is a validated plain identifier.
  ColdStore(const std::string& url, std::string schema);
  ~ColdStore();
  ColdStore(ColdStore&&) noexcept;
  ColdStore& operator=(ColdStore&&) noexcept;

  // Creates or upgrades the schema: applies the embedded sql/NNN_*.sql files not yet
  // applied, in order, each in its own transaction, recorded in <schema>.schema_migrations.
  // Idempotent, and safe from two processes at once (an advisory lock serialises them).
  // Returns how many migrations it applied.
  int migrate();
  int schema_version();  // highest applied migration, 0 when none

  // The deployment the schema belongs to; nullopt while nobody has claimed it. Throws
  // UsageError when the schema is not migrated that far.
  std::optional<Deployment> deployment();
  // Claims the schema for `me` unless someone has (safe from several processes at once) and
  // returns its owner: `me`, or whoever claimed it first.
  Deployment claim_deployment(const Deployment& me);
  // Rewrites the owner's row to `me` if its id is still `owner_id` (or already me.id): the
  // owner moved, or handed over. False when someone else changed it meanwhile.
  bool update_deployment(const std::string& owner_id, const Deployment& me);

  // A key of the deployment (sql/010_serve_keys.sql), e.g. serve's cursor key: the one kept
  // under `name`, which is `candidate` if nobody stored one before (safe from several
  // processes at once: every one gets the first that was stored). Throws UsageError when
  // the schema is not migrated that far.
  std::string shared_key(const std::string& name, const std::string& candidate);

  // Spill: upserts the rows of one board period in one transaction under a fresh version
  // (nextval of <schema>.cold_version), committed before it returns. An existing row of
  // the same member is replaced. Returns the version.
  // Rows whose `known_absent` entry is true are promised to have no row yet: they go in by
  // COPY, without a conflict check (if the promise fails, the whole spill is done again
  // the careful way, so it costs time, never correctness).
  std::int64_t upsert(const PeriodKey& period, const std::vector<ColdRow>& rows,
                      const std::vector<bool>& known_absent = {});
  // Refreshes the planner's statistics of the cold tier. Right after a big spill they are
  // stale, and the planner may then look a member up through the listing index, reading
  // the whole period (tens of ms) instead of one primary-key probe.
  void analyze();

  // Rehydrate: the cold rows of many (period, member) pairs in one round trip; result i
  // belongs to keys[i].
  std::vector<std::optional<ColdHit>> lookup(const std::vector<MemberKey>& keys);

  // The periods that have cold rows (of one board, or of every board), sorted. Cheap on a
  // big cold tier: it skips from period to period along the primary key.
  std::vector<PeriodKey> periods_with_rows(const std::optional<std::string>& board = {});

  // Profiles (sql/008_profiles.sql). upsert_profiles sets one field (name or metadata) of
  // each (member, value), keeping the other; profiles returns those of these members that
  // have a row; has_profiles: whether any member of the board has that field there.
  using ProfileField = cold::ProfileField;
  void upsert_profiles(const std::string& board, ProfileField field,
                       const std::vector<std::pair<std::string, std::string>>& values);
  std::vector<Profile> profiles(const std::string& board, const std::vector<std::string>& members);
  bool has_profiles(const std::string& board, ProfileField field);
  // The board's profile lock (a session advisory lock on this store's connection), held by
  // whoever copies profiles from Redis to PostgreSQL (tick) or deletes them in both (erase,
  // drop) for the whole of it: a copy read from Redis before a deletion can never be written
  // after it. lock waits however long it takes; see ProfileLock.
  void lock_profiles(const std::string& board);
  void unlock_profiles(const std::string& board);
  // Deletes every cold row of the period (after it is archived).
  std::int64_t drop_period(const PeriodKey& period);

  // A consistent snapshot for a group of reads (REPEATABLE READ, read only). The reader's
  // transaction occupies this store's connection: until the reader is destroyed, the
  // store's other calls throw bk::Error (use a second ColdStore to write meanwhile). A
  // reader may outlive its store.
  ColdReader reader();

  // The store's connection, for the cold units that share it (cold/moderation_*.h: bans,
  // member removal, erasure, reset and drop take it in their constructors).
  std::shared_ptr<pg::Link> link();

 private:
  friend class ColdReader;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Holds a board's profile lock (ColdStore::lock_profiles) for its life. Releasing never
// throws: a connection that broke released the lock with it.
class ProfileLock {
 public:
  ProfileLock(ColdStore& store, std::string board);
  ~ProfileLock();
  ProfileLock(const ProfileLock&) = delete;
  ProfileLock& operator=(const ProfileLock&) = delete;

 private:
  ColdStore& store_;
  std::string board_;
};

}  // namespace bk::cold
