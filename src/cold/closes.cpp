// Close notices in PostgreSQL (see closes.h) and their statements.
#include "cold/closes.h"

#include <algorithm>

#include "cold/pg.h"
#include "cold/statements.h"
#include "core/json.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

namespace {

constexpr const char* kNoticeColumns =
    "seq, board, period, period_id, round(extract(epoch FROM period_start) * 1000)::bigint,"
    " round(extract(epoch FROM period_end) * 1000)::bigint, members, tiers::text, hot_lost,"
    " round(extract(epoch FROM archived_at) * 1000)::bigint, stream,"
    " round(extract(epoch FROM published_at) * 1000)::bigint, league::text";

CloseNotice notice_from(const pqxx::row& r) {
  CloseNotice n;
  n.seq = r[0].as<std::int64_t>();
  n.key = {r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>()};
  n.start = from_epoch_ms(r[4].as<std::int64_t>());
  n.end = from_epoch_ms(r[5].as<std::int64_t>());
  n.members = r[6].as<std::int64_t>();
  n.tiers = r[7].as<std::string>();
  n.hot_lost = r[8].as<bool>();
  n.archived_at = from_epoch_ms(r[9].as<std::int64_t>());
  n.stream = r[10].as<std::string>();
  if (!r[11].is_null()) n.published_at = from_epoch_ms(r[11].as<std::int64_t>());
  if (!r[12].is_null()) n.league = r[12].as<std::string>();
  return n;
}

std::vector<CloseNotice> notices_from(const pqxx::result& rows) {
  std::vector<CloseNotice> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(notice_from(r));
  return out;
}

}  // namespace

std::string tier_counts_json(const std::vector<TierCount>& tiers) {
  JsonLine counts;
  for (const TierCount& t : tiers) counts.num(t.tier, t.members);
  return counts.done();
}

std::string closes_channel(const std::string& schema) {
  constexpr std::size_t kMaxIdentifier = 63;
  const std::string suffix = "_closes";
  return schema.substr(0, kMaxIdentifier - suffix.size()) + suffix;
}

std::int64_t write_close_notice(pqxx::transaction_base& txn, const std::string& schema,
                                const ArchivedClose& close) {
  const std::string q = pg::quote_identifier(schema);
  // Held until this transaction ends: a notice's seq is taken only after every notice with a
  // smaller one committed or rolled back, so a reader that sees a seq sees every smaller one
  // that will ever exist (the publisher's argument, docs/architecture.md).
  txn.exec_params("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "bk-closes/" + schema);
  const std::int64_t seq =
      txn.exec_params1(
             "INSERT INTO " + q +
                 ".period_closes (seq, board, period, period_id, period_start, period_end,"
                 " members, tiers, hot_lost, archived_at, stream, league) VALUES (nextval(" +
                 pg::quote_literal(q + ".period_close_seq") +
                 "), $1, $2, $3, to_timestamp($4 / 1000.0), to_timestamp($5 / 1000.0), $6,"
                 " $7::jsonb, $8, now(), $9, nullif($10, '')::jsonb) RETURNING seq",
             close.key.board, close.key.period, close.key.period_id, to_epoch_ms(close.start),
             to_epoch_ms(close.end), close.members, tier_counts_json(close.tiers), close.hot_lost,
             close.stream, close.league)[0]
          .as<std::int64_t>();
  // Delivered to listeners at commit, never before (nor at all on a rollback).
  txn.exec_params("SELECT pg_notify($1, $2)", closes_channel(schema), std::to_string(seq));
  return seq;
}

StatementTable closes_statements(const std::string& q) {
  const std::string t = q + ".period_closes";
  const std::string cols = kNoticeColumns;
  return {
      // The distinct streams through the (stream, seq) index, one probe each.
      {"bk_cold_closes_streams", "WITH RECURSIVE s AS (SELECT min(stream) AS stream FROM " + t +
                                     " UNION ALL SELECT (SELECT min(stream) FROM " + t +
                                     " WHERE stream > s.stream) FROM s WHERE s.stream IS NOT NULL)"
                                     " SELECT stream FROM s WHERE stream IS NOT NULL"},
      {"bk_cold_closes_last_seq", "SELECT coalesce(max(seq), 0) FROM " + t},
      {"bk_cold_closes_mark_through",
       "UPDATE " + t +
           " SET published_at = now() WHERE stream = $1 AND seq <= $2"
           " AND published_at IS NULL"},
      {"bk_cold_closes_of_stream",
       "SELECT " + cols + " FROM " + t + " WHERE stream = $1 AND seq > $2 ORDER BY seq LIMIT $3"},
      {"bk_cold_closes_mark",
       "UPDATE " + t + " SET published_at = coalesce(published_at, now()) WHERE seq = $1"},
      {"bk_cold_closes_counts",
       "SELECT count(*) FILTER (WHERE published_at IS NULL),"
       " count(*) FILTER (WHERE published_at IS NOT NULL) FROM " +
           t},
      {"bk_cold_closes_first", "SELECT " + cols + " FROM " + t +
                                   " WHERE seq > $1 AND seq < $2 AND archived_at >="
                                   " to_timestamp($3 / 1000.0) ORDER BY seq LIMIT $4"},
      {"bk_cold_closes_last", "SELECT " + cols + " FROM " + t +
                                  " WHERE seq > $1 AND seq < $2 AND archived_at >="
                                  " to_timestamp($3 / 1000.0) ORDER BY seq DESC LIMIT $4"},
  };
}

Closes::Closes(std::shared_ptr<Link> link) : link_(std::move(link)) {}

std::vector<std::string> Closes::streams() {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "listing the close notices' streams", [&] {
    pqxx::nontransaction n(*session.conn);
    std::vector<std::string> out;
    for (const auto& r : n.exec_prepared("bk_cold_closes_streams"))
      out.push_back(r[0].as<std::string>());
    return out;
  });
}

std::int64_t Closes::last_seq() {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading the last close notice", [&] {
    pqxx::nontransaction n(*session.conn);
    return n.exec_prepared1("bk_cold_closes_last_seq")[0].as<std::int64_t>();
  });
}

std::int64_t Closes::mark_published_through(const std::string& stream, std::int64_t through) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "marking close notices published", [&] {
    pqxx::work w(*session.conn);
    const pqxx::result r = w.exec_prepared("bk_cold_closes_mark_through", stream, through);
    w.commit();
    return static_cast<std::int64_t>(r.affected_rows());
  });
}

std::vector<CloseNotice> Closes::of_stream(const std::string& stream, std::int64_t after,
                                           std::int64_t limit) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading close notices", [&] {
    pqxx::nontransaction n(*session.conn);
    return notices_from(n.exec_prepared("bk_cold_closes_of_stream", stream, after, limit));
  });
}

void Closes::mark_published(std::int64_t seq) {
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "marking a close notice published", [&] {
    pqxx::work w(*session.conn);
    w.exec_prepared("bk_cold_closes_mark", seq);
    w.commit();
    return 0;
  });
}

std::string Closes::history_sql(const PeriodKey& key) const {
  using pg::quote_literal;
  // The schema unquoted, as people write it: the config allows plain identifiers only.
  return "SELECT rank, member, points, achieved_at, name, metadata, tier FROM " + link_->schema +
         ".history WHERE board = " + quote_literal(key.board) +
         " AND period = " + quote_literal(key.period) +
         " AND period_id = " + quote_literal(key.period_id) +
         " ORDER BY rank, member COLLATE \"C\"";
}

Closes::Counts Closes::counts() {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "counting close notices", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::row r = n.exec_prepared1("bk_cold_closes_counts");
    return Counts{r[0].as<std::int64_t>(), r[1].as<std::int64_t>()};
  });
}

std::vector<CloseNotice> Closes::page(const Query& query) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "listing close notices", [&] {
    pqxx::nontransaction n(*session.conn);
    const std::int64_t since = query.since ? to_epoch_ms(*query.since) : 0;
    std::vector<CloseNotice> out =
        notices_from(n.exec_prepared(query.newest ? "bk_cold_closes_last" : "bk_cold_closes_first",
                                     query.after_seq, query.before_seq, since, query.limit));
    if (query.newest) std::reverse(out.begin(), out.end());
    return out;
  });
}

}  // namespace bk::cold
