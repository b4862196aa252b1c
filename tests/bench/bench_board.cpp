// Rows 3-6 and 10: a big board spilled and archived by the real binary (`boardkeeper tick`)
// against plain COPY of the same rows, the update that rehydrates a spilled member against
// ZINCRBY, and a deep read of the spilled board against a shallow one.
#include "bench.h"
#include "cold/cold_store.h"
#include "redis/url.h"

namespace bk_bench {

std::vector<std::string> Bench::tick_args(const std::string& config_path,
                                          const std::string& now) const {
  std::vector<std::string> args = {"--config", config_path, "--now", now, "tick"};
  if (opt.chunk > 0) {
    args.push_back("--chunk");
    args.push_back(std::to_string(opt.chunk));
  }
  return args;
}

Bench::BoardFigures Bench::bench_board(std::int64_t spilled_members, bool latency) {
  BoardFigures f;
  f.members = spilled_members;
  const std::string board = "big" + std::to_string(spilled_members);
  const std::string key_prefix = prefix + "b" + std::to_string(spilled_members);
  const std::string text = config_text(key_prefix, board_yaml(board, "[daily]", opt.keep));
  const std::string config_path = write_config(board, text);
  const BoardRun run{board, key_prefix, config_path, " WHERE board = '" + board + "'",
                     bk::parse_config(text, config_path, {})};
  bk::redis::Connection redis(bk::redis::parse_url(redis_url));
  RawPg pg(pg_url);
  // Each board size is a deployment of its own (its own key prefix) on the one schema, one
  // after the other: the schema is handed over to it (see service/deployment.h).
  pg.exec("DELETE FROM " + prefix + ".deployment");

  f.fill_rate = fill_board(run, redis, spilled_members);  // not timed as a result
  spill_board(f, run, pg);
  if (latency) {
    time_rehydration(f, run, redis, pg);
    time_reads(f, run);
  }
  archive_board(f, run, pg);
  return f;
}

double Bench::fill_board(const BoardRun& run, bk::redis::Connection& redis,
                         std::int64_t spilled_members) {
  const std::string& board = run.board;
  const bk::Config& config = run.config;
  bk::service::Leaderboards boards(config, redis, bk::Clock(day + bk::Millis{43'200'000}));
  const std::int64_t total = opt.keep + spilled_members;
  std::vector<bk::service::Update> batch;
  const auto t0 = Clock::now();
  for (std::int64_t start = 0; start < total; start += 1000) {
    batch.clear();
    for (std::int64_t i = start; i < std::min(total, start + 1000); ++i) {
      bk::service::Update u;
      u.board = board;
      u.member = "player-" + std::to_string(i);
      u.value = static_cast<std::int64_t>(rng() % 1'000'000);
      u.at = day + bk::Millis{3'600'000 + static_cast<std::int64_t>(rng() % 28'800'000)};
      batch.push_back(std::move(u));
    }
    for (const auto& r : boards.apply(batch)) {
      if (r.status != bk::service::UpdateStatus::applied) fail("fill: " + r.reason);
    }
  }
  return static_cast<double>(total) / seconds_since(t0);
}

// 4. Spill: `boardkeeper tick` while the period is open.
void Bench::spill_board(BoardFigures& f, const BoardRun& run, RawPg& pg) {
  const std::string& schema = prefix;
  const std::string& where = run.where;
  const std::int64_t spilled_members = f.members;
  f.spill = run_binary(tick_args(run.config_path, at(46'800'000)), dir + "/spill.log");
  f.spilled = pg.scalar("SELECT count(*) FROM " + schema + ".cold_members" + where);
  if (f.spilled != spilled_members) {
    fail("spill moved " + fmt_int(f.spilled) + " members, expected " + fmt_int(spilled_members));
  }
  {
    const std::string rows = pg.copy_out("SELECT * FROM " + schema + ".cold_members" + where);
    const std::string table = schema + ".copy_cold_" + std::to_string(spilled_members);
    pg.exec("CREATE TABLE " + table + " (LIKE " + schema + ".cold_members INCLUDING ALL)");
    f.spill_copy = pg.copy_in(table, rows);
    pg.exec("DROP TABLE " + table);
  }
}

// 5. Latency of an update that rehydrates a cold member, one at a time.
void Bench::time_rehydration(BoardFigures& f, const BoardRun& run, bk::redis::Connection& redis,
                             RawPg& pg) {
  const std::string& schema = prefix;
  const std::string& board = run.board;
  const std::string& key_prefix = run.key_prefix;
  const std::string& where = run.where;
  const bk::Config& config = run.config;
  bk::cold::ColdStore cold(pg_url, schema);
  bk::service::Leaderboards boards(config, redis, bk::Clock(day + bk::Millis{50'400'000}), &cold);
  const auto members = pg.exec("SELECT member FROM " + schema + ".cold_members" + where +
                               " ORDER BY md5(member) LIMIT " + std::to_string(opt.samples));
  RawRedis raw(redis_url);
  const std::string raw_key = key_prefix + ":raw:latency";
  for (std::size_t i = 0; i < members.size(); ++i) {
    bk::service::Update u;
    u.board = board;
    u.member = members[i][0];
    u.value = 1;
    u.at = day + bk::Millis{50'400'000};
    auto t0 = Clock::now();
    const auto r = boards.apply(u);
    f.rehydrate_ms.push_back(seconds_since(t0) * 1000);
    if (r.status != bk::service::UpdateStatus::applied) fail("rehydrating update: " + r.reason);
    // The same member again: now hot, no rehydration.
    t0 = Clock::now();
    boards.apply(u);
    f.hot_update_ms.push_back(seconds_since(t0) * 1000);
    t0 = Clock::now();
    raw.command({"ZINCRBY", raw_key, "1", u.member});
    f.zincrby_ms.push_back(seconds_since(t0) * 1000);
  }
  if (boards.counters().rehydrated != static_cast<std::int64_t>(members.size())) {
    fail("expected " + fmt_int(static_cast<std::int64_t>(members.size())) +
         " rehydrations, counted " + fmt_int(boards.counters().rehydrated));
  }
}

// 10. A deep read of the spilled board (the last 10 members) against the first 10.
void Bench::time_reads(BoardFigures& f, const BoardRun& run) {
  const std::vector<std::string> top = {
      "--config", run.config_path, "--now", at(50'400'000), "top", run.board, "daily", "-n", "10"};
  f.shallow_read = run_binary(top, dir + "/top.log");
  auto deep = top;
  deep.push_back("--offset");
  deep.push_back(std::to_string(opt.keep + f.members - 10));
  f.deep_read = run_binary(deep, dir + "/top-deep.log");
}

// 3. Archive: `boardkeeper tick` after the period's end and grace.
void Bench::archive_board(BoardFigures& f, const BoardRun& run, RawPg& pg) {
  const std::string& schema = prefix;
  const std::string& where = run.where;
  const std::int64_t spilled_members = f.members;
  f.archive =
      run_binary(tick_args(run.config_path, at(86'400'000 + 3'600'000)), dir + "/archive.log");
  const std::string period_where =
      where + " AND period = 'daily' AND period_id = '" + at(0).substr(0, 10) + "'";
  f.archived = pg.scalar("SELECT count(*) FROM " + schema + ".history" + period_where);
  const std::int64_t status_rows = pg.scalar(
      "SELECT count(*) FROM " + schema + ".periods" + period_where +
      " AND status = 'archived' AND members = " + std::to_string(opt.keep + spilled_members));
  if (f.archived != opt.keep + spilled_members || status_rows != 1) {
    fail("archive wrote " + fmt_int(f.archived) + " rows, expected " +
         fmt_int(opt.keep + spilled_members));
  }
  {
    // The period's rows as history_rows holds them (a large period's own table has one
    // more column, `part`).
    const std::string columns =
        "SELECT board, period, period_id, period_start, period_end, rank, position, member,"
        " points, achieved_at, name, metadata, tier FROM " +
        schema;
    const std::string rows = pg.copy_out(columns + ".history_rows" + period_where + " UNION ALL " +
                                         columns + ".history_large" + period_where);
    const std::string table = schema + ".copy_history_" + std::to_string(spilled_members);
    pg.exec("CREATE TABLE " + table + " (LIKE " + schema + ".history_rows INCLUDING ALL)");
    f.archive_copy = pg.copy_in(table, rows);
    pg.exec("DROP TABLE " + table);
  }
}

}  // namespace bk_bench
