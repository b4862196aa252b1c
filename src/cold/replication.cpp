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
    return n
        .exec1(
            "SELECT CASE WHEN current_setting('synchronous_commit') = 'off'"
            " THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END::text")[0]
        .as<std::string>();
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

}  // namespace bk::cold
