// ColdStore: one connection whose statement tables are prepared on every fresh session, and
// the concerns that share it (migrations, ownership, the cold tier, profiles, readers).
#include "cold/cold_store.h"

#include <utility>

#include "cold/cold_tier.h"
#include "cold/migrations.h"
#include "cold/ownership.h"
#include "cold/pg.h"
#include "cold/profile_store.h"
#include "cold/statements.h"
#include "core/error.h"

namespace bk::cold {

struct ColdStore::Impl {
  explicit Impl(std::shared_ptr<pg::Link> l)
      : link(l), migrations(l), ownership(l), tier(l), profiles(std::move(l)) {}

  std::shared_ptr<pg::Link> link;
  Migrations migrations;
  Ownership ownership;
  ColdTier tier;
  ProfileStore profiles;
};

namespace {

// A template, as a free function may not name the private Impl type.
template <class StoreImpl>
StoreImpl& live(const std::unique_ptr<StoreImpl>& impl) {
  if (!impl) throw Error("cold store: used after it was moved from");
  return *impl;
}

}  // namespace

ColdStore::ColdStore(const std::string& url, std::string schema) {
  const StatementTable statements = cold_store_statements(pg::quote_identifier(schema));
  impl_ = std::make_unique<Impl>(
      pg::connect(url, std::move(schema), [statements](pqxx::connection_base& c) {
        for (const Statement& s : statements) c.prepare(s.name, s.sql);
      }));
}

ColdStore::~ColdStore() = default;
ColdStore::ColdStore(ColdStore&&) noexcept = default;
ColdStore& ColdStore::operator=(ColdStore&&) noexcept = default;

int ColdStore::migrate() {
  return live(impl_).migrations.apply();
}

int ColdStore::schema_version() {
  return live(impl_).migrations.version();
}

std::optional<Deployment> ColdStore::deployment() {
  return live(impl_).ownership.owner();
}

Deployment ColdStore::claim_deployment(const Deployment& me) {
  return live(impl_).ownership.claim(me);
}

bool ColdStore::update_deployment(const std::string& owner_id, const Deployment& me) {
  return live(impl_).ownership.update(owner_id, me);
}

std::string ColdStore::shared_key(const std::string& name, const std::string& candidate) {
  return live(impl_).ownership.shared_key(name, candidate);
}

std::int64_t ColdStore::upsert(const PeriodKey& period, const std::vector<ColdRow>& rows,
                               const std::vector<bool>& known_absent) {
  return live(impl_).tier.upsert(period, rows, known_absent);
}

void ColdStore::analyze() {
  live(impl_).tier.analyze();
}

std::vector<std::optional<ColdHit>> ColdStore::lookup(const std::vector<MemberKey>& keys) {
  return live(impl_).tier.lookup(keys);
}

std::vector<PeriodKey> ColdStore::periods_with_rows(const std::optional<std::string>& board) {
  return live(impl_).tier.periods_with_rows(board);
}

std::int64_t ColdStore::drop_period(const PeriodKey& period) {
  return live(impl_).tier.drop_period(period);
}

void ColdStore::upsert_profiles(const std::string& board, ProfileField field,
                                const std::vector<std::pair<std::string, std::string>>& values) {
  if (values.empty()) return;  // nothing to write, whatever the store's state
  live(impl_).profiles.upsert(board, field, values);
}

std::vector<Profile> ColdStore::profiles(const std::string& board,
                                         const std::vector<std::string>& members) {
  if (members.empty()) return {};
  return live(impl_).profiles.of(board, members);
}

bool ColdStore::has_profiles(const std::string& board, ProfileField field) {
  return live(impl_).profiles.any(board, field);
}

void ColdStore::lock_profiles(const std::string& board) {
  live(impl_).profiles.lock(board);
}

void ColdStore::unlock_profiles(const std::string& board) {
  live(impl_).profiles.unlock(board);
}

ProfileLock::ProfileLock(ColdStore& store, std::string board)
    : store_(store), board_(std::move(board)) {
  store_.lock_profiles(board_);
}

ProfileLock::~ProfileLock() {
  try {
    store_.unlock_profiles(board_);
  } catch (...) {  // NOLINT(bugprone-empty-catch): the lock went with the connection
  }
}

ColdReader ColdStore::reader() {
  return ColdReader::open(live(impl_).link);
}

std::shared_ptr<pg::Link> ColdStore::link() {
  return live(impl_).link;
}

}  // namespace bk::cold
