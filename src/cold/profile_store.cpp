// Members' profiles in PostgreSQL (see profile_store.h) and their statements.
#include "cold/profile_store.h"

#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"
#include "core/profile.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

StatementTable profile_statements(const std::string& q) {
  // One field of many members, the other kept.
  const auto upsert_profile = [&](const std::string& column, const std::string& value) {
    return "INSERT INTO " + q + ".profiles AS p (board, member, " + column +
           ") SELECT $1, u.member, " + value +
           " FROM unnest($2::text[], $3::text[]) AS u(member, v)"
           " ON CONFLICT (board, member) DO UPDATE SET " +
           column + " = EXCLUDED." + column + ", updated_at = now()";
  };
  // Each through its partial index (sql/009_profile_fields.sql).
  const auto has_field = [&](const std::string& column) {
    return "SELECT EXISTS (SELECT 1 FROM " + q + ".profiles WHERE board = $1 AND " + column +
           " IS NOT NULL)";
  };
  return {
      {"bk_cold_profile_names", upsert_profile("name", "u.v")},
      {"bk_cold_profile_metadata", upsert_profile("metadata", "u.v::jsonb")},
      {"bk_cold_profiles", "SELECT member, name, metadata::text FROM " + q +
                               ".profiles WHERE board = $1 AND member = ANY($2::text[])"},
      {"bk_cold_has_name", has_field("name")},
      {"bk_cold_has_metadata", has_field("metadata")},
      {"bk_cold_profile_lock", "SELECT pg_advisory_lock(hashtextextended($1, 0))"},
      {"bk_cold_profile_unlock", "SELECT pg_advisory_unlock(hashtextextended($1, 0))"},
  };
}

ProfileStore::ProfileStore(std::shared_ptr<Link> link) : link_(std::move(link)) {}

namespace {
std::string profile_lock(const Link& l, const std::string& board) {
  return "bk-profiles/" + l.schema + "/" + board;
}
}  // namespace

void ProfileStore::lock(const std::string& board) {
  Link& l = *link_;
  check_text("board", board);
  Session& session = l.use();
  guarded(l, &session, "waiting for the board's profile lock", [&] {
    pqxx::nontransaction n(*session.conn);
    n.exec_prepared("bk_cold_profile_lock", profile_lock(l, board));
    return 0;
  });
}

void ProfileStore::unlock(const std::string& board) {
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "releasing the board's profile lock", [&] {
    pqxx::nontransaction n(*session.conn);
    n.exec_prepared("bk_cold_profile_unlock", profile_lock(l, board));
    return 0;
  });
}

void ProfileStore::upsert(const std::string& board, ProfileField field,
                          const std::vector<std::pair<std::string, std::string>>& values) {
  if (values.empty()) return;
  Link& l = *link_;
  check_text("board", board);
  pg::ArrayLiteral members, texts;
  for (const auto& [member, value] : values) {
    check_text("member id", member);
    check_text("profile", value);
    members.text(member);
    texts.text(value);
  }
  Session& session = l.use();
  guarded(l, &session, "writing profiles", [&] {
    pqxx::work w(*session.conn);
    w.exec_prepared(
        field == ProfileField::name ? "bk_cold_profile_names" : "bk_cold_profile_metadata", board,
        members.done(), texts.done());
    w.commit();
    return 0;
  });
}

std::vector<Profile> ProfileStore::of(const std::string& board,
                                      const std::vector<std::string>& members) {
  if (members.empty()) return {};
  Link& l = *link_;
  check_text("board", board);
  pg::ArrayLiteral list;
  for (const std::string& member : members) {
    check_text("member id", member);
    list.text(member);
  }
  Session& session = l.use();
  return guarded(l, &session, "reading profiles", [&] {
    pqxx::nontransaction n(*session.conn);
    std::vector<Profile> out;
    for (const auto& r : n.exec_prepared("bk_cold_profiles", board, list.done())) {
      Profile p{r[0].as<std::string>(), std::nullopt, std::nullopt};
      if (!r[1].is_null()) p.name = r[1].as<std::string>();
      // jsonb's text reorders and spaces the object: the same text as Redis keeps instead.
      if (!r[2].is_null()) p.metadata = compact_metadata(r[2].as<std::string>());
      out.push_back(std::move(p));
    }
    return out;
  });
}

bool ProfileStore::any(const std::string& board, ProfileField field) {
  Link& l = *link_;
  check_text("board", board);
  Session& session = l.use();
  return guarded(l, &session, "reading profiles", [&] {
    pqxx::nontransaction n(*session.conn);
    return n
        .exec_prepared1(field == ProfileField::name ? "bk_cold_has_name" : "bk_cold_has_metadata",
                        board)[0]
        .as<bool>();
  });
}

}  // namespace bk::cold
