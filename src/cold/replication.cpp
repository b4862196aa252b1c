// The replication functions of cold/replication.h: three small queries, each bounded by the
// caller's CallDeadline like every other call.
#include "cold/replication.h"

#include "cold/cold_store.h"
#include "cold/pg.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

std::string wal_position(ColdStore& primary) {
  const auto link = primary.link();
  Session& session = link->use();
  return guarded(*link, &session, "reading the WAL position", [&] {
    pqxx::nontransaction n(*session.conn);
    return n.exec1("SELECT pg_current_wal_lsn()::text")[0].as<std::string>();
  });
}

bool replayed(ColdStore& replica, const std::string& position) {
  const auto link = replica.link();
  Session& session = link->use();
  return guarded(*link, &session, "asking the replica how far it replayed", [&] {
    pqxx::nontransaction n(*session.conn);
    const auto r = n.exec1("SELECT pg_last_wal_replay_lsn() >= " + n.quote(position) + "::pg_lsn");
    return !r[0].is_null() && r[0].as<bool>();
  });
}

std::optional<ReplicaLag> replica_lag(ColdStore& replica, const std::string& primary_position) {
  const auto link = replica.link();
  Session& session = link->use();
  return guarded(*link, &session, "asking the replica its lag", [&] {
    pqxx::nontransaction n(*session.conn);
    const auto r = n.exec1("SELECT pg_wal_lsn_diff(" + n.quote(primary_position) +
                           "::pg_lsn, pg_last_wal_replay_lsn())::bigint,"
                           " extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8");
    std::optional<ReplicaLag> lag;
    if (r[0].is_null()) return lag;
    lag = ReplicaLag{std::max<std::int64_t>(0, r[0].as<std::int64_t>()), std::nullopt};
    if (!r[1].is_null()) lag->seconds = r[1].as<double>();
    return lag;
  });
}

}  // namespace bk::cold
