// Rows 11 and 12 on a Redis Cluster (BK_TEST_REDIS_CLUSTER_URL: the 3-master test cluster):
// the Redis work of ingest over 30 boards per master against one node, and one board through
// the update path via the cluster against a plain connection to its master.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <unordered_map>

#include "bench.h"
#include "cold/cold_store.h"
#include "redis/slots.h"
#include "redis/url.h"

namespace bk_bench {
namespace {

// The test cluster's masters serve the three thirds of the slots (redis-cli --cluster
// create): the third of `key`'s slot.
int third(const std::string& key) {
  return bk::redis::key_slot(key) * 3 / bk::redis::kClusterSlots;
}

// Boards placed as an operator places hot keys (spread over the masters): the first ten
// names of cb0, cb1, ... on each master. And cb0..cb29 as they happen to hash.
void place_boards(std::vector<int>& hashed_boards, std::vector<std::string>& even,
                  std::vector<std::string>& hashed) {
  std::vector<int> per_master(3, 0);
  for (int n = 0; even.size() < 30 || hashed.size() < 30; ++n) {
    const std::string name = "cb" + std::to_string(n);
    const auto master = static_cast<std::size_t>(third("{" + name + "}"));
    if (n < 30) {
      hashed.push_back(name);
      ++hashed_boards[master];
    }
    if (per_master[master] < 10) {
      ++per_master[master];
      even.push_back(name);
    }
  }
}

// A stream on each master: tags whose slots lie in the three thirds.
std::vector<std::string> spread_streams(const std::string& key_prefix) {
  std::vector<std::string> streams;
  for (int t = 0; t < 3; ++t) {
    for (int n = 0; streams.size() == static_cast<std::size_t>(t); ++n) {
      const std::string key = key_prefix + ":{ev" + std::to_string(n) + "}";
      if (third(key) == t) streams.push_back(key);
    }
  }
  return streams;
}

// A key prefix whose own keys (<prefix>:boards, :deployment) live on `board`'s master.
std::string direct_prefix_for(const std::string& prefix, const std::string& board) {
  const int board_third = third("{" + board + "}");
  std::string direct_prefix;
  for (int n = 0; direct_prefix.empty(); ++n) {
    const std::string p = prefix + "rd" + std::to_string(n);
    if (third(p + ":boards") == board_third && third(p + ":deployment") == board_third) {
      direct_prefix = p;
    }
  }
  return direct_prefix;
}

// A plain (not cluster) connection's options to `board`'s master.
bk::redis::Options master_of(bk::redis::Connection& cluster, const std::string& board) {
  bk::redis::Options at_master = bk::redis::parse_url(Bench::cluster_url());
  const int board_slot = bk::redis::key_slot("{" + board + "}");
  for (const auto& range : cluster.master_command(0, {"CLUSTER", "SLOTS"}).elements) {
    if (range.at(0).as_int() <= board_slot && board_slot <= range.at(1).as_int()) {
      at_master.host = range.at(2).at(0).as_string();
      at_master.port = static_cast<int>(range.at(2).at(1).as_int());
    }
  }
  return at_master;
}

// The phase's keys (its own prefixes) go; other runs' stay.
void drop_cluster_keys(bk::redis::Connection& single, bk::redis::Connection& cluster,
                       const std::string& prefix) {
  for (auto* conn : {&single, &cluster}) {
    for (std::size_t i = 0; i < conn->masters(); ++i) {
      // The phase's keys (its own prefixes) go; other runs' stay.
      for (const std::string& pattern : {prefix + "c*", prefix + "r*"}) {
        std::string cursor = "0";
        do {
          const auto r =
              conn->master_command(i, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
          cursor = r.at(0).as_string();
          for (const auto& k : r.at(1).elements) conn->command({"UNLINK", k.as_string()});
        } while (cursor != "0");
      }
    }
  }
}

}  // namespace

std::string Bench::cluster_config(const std::string& url, bool cluster,
                                  const std::string& key_prefix,
                                  const std::vector<std::string>& streams) const {
  std::string text = "redis:\n  url: " + url + "\n  key_prefix: " + key_prefix +
                     (cluster ? "\n  cluster: true" : "") + "\npostgres:\n  url: " + pg_url +
                     "\n  schema: " + prefix + "\n";
  if (!streams.empty()) {
    text += "ingest:\n  stream: [";
    for (std::size_t i = 0; i < streams.size(); ++i) {
      text += (i > 0 ? ", \"" : "\"") + streams[i] + "\"";
    }
    text += "]\n";
  }
  return text + "boards:\n" + board_yaml("cb*", "[daily, weekly, monthly]", 100'000'000);
}

std::vector<Bench::ServerUse> Bench::work(bk::redis::Connection& conn) {
  std::vector<ServerUse> use;
  for (std::size_t i = 0; i < conn.masters(); ++i) {
    use.push_back(commandstats_use(conn.master_command(i, {"INFO", "commandstats"}).as_string()));
  }
  return use;
}

void Bench::reset_work(bk::redis::Connection& conn) {
  for (std::size_t i = 0; i < conn.masters(); ++i) {
    conn.master_command(i, {"CONFIG", "RESETSTAT"}).checked();
  }
}

std::vector<Bench::ServerUse> Bench::cluster_ingest(bk::redis::Connection& conn,
                                                    const std::string& config_text,
                                                    const std::string& key_prefix,
                                                    const std::vector<std::string>& streams,
                                                    const std::vector<std::string>& names,
                                                    const std::vector<BoardEvent>& events) {
  const std::string path = write_config(key_prefix, config_text);
  RawPg(pg_url).exec("DELETE FROM " + prefix + ".deployment");  // hand the schema over
  reset_work(conn);
  std::vector<bk::redis::Args> batch;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const BoardEvent& e = events[i];
    batch.push_back({"XADD", streams[static_cast<std::size_t>(e.board) % streams.size()], "*",
                     "board", names[static_cast<std::size_t>(e.board)], "member", e.member, "value",
                     std::to_string(e.value), "at", std::to_string(e.at_ms)});
    if (batch.size() == 1000 || i + 1 == events.size()) {
      for (const auto& r : conn.pipeline(batch)) r.checked();
      batch.clear();
    }
  }
  run_binary({"--config", path, "--now", at(43'200'000), "ingest", "--drain"},
             dir + "/ingest-" + key_prefix + ".log");
  std::vector<ServerUse> use = work(conn);
  for (const std::string& stream : streams) {
    if (conn.command({"XLEN", stream + ":dead"}).as_int() != 0) {
      fail("cluster ingest dead-lettered events of " + stream);
    }
    if (conn.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int() != 0) {
      fail("cluster ingest left events pending in " + stream);
    }
  }
  // Check: every board's best member has the points its events sum to.
  const bk::Config config = bk::parse_config(config_text, "check.yaml", {});
  bk::service::Leaderboards boards(config, conn, bk::Clock(day + bk::Millis{43'200'000}));
  std::vector<std::unordered_map<std::string, std::int64_t>> sums(30);
  for (const BoardEvent& e : events) sums[static_cast<std::size_t>(e.board)][e.member] += e.value;
  for (int b = 0; b < 30; ++b) {
    std::int64_t best = 0;
    for (const auto& [member, points] : sums[static_cast<std::size_t>(b)]) {
      best = std::max(best, points);
    }
    const std::string& name = names[static_cast<std::size_t>(b)];
    const auto top = boards.reads().top_at({boards.resolve(name, "daily", std::nullopt)}, 0, 1);
    if (best > 0 && (top.empty() || top[0].points != best)) {
      fail("cluster ingest: board " + name + " does not sum its events");
    }
  }
  return use;
}

double Bench::apply_rate(bk::redis::Connection& conn, const bk::Config& config,
                         const std::vector<bk::service::Update>& events) {
  std::unique_ptr<bk::cold::ColdStore> cold;
  bk::service::Leaderboards boards(
      config, conn, bk::Clock(day + bk::Millis{43'200'000}), [&]() -> bk::cold::ColdStore& {
        if (!cold) cold = std::make_unique<bk::cold::ColdStore>(pg_url, config.postgres.schema);
        return *cold;
      });
  const auto t0 = Clock::now();
  std::vector<bk::service::Update> batch;
  for (std::size_t start = 0; start < events.size(); start += 1000) {
    batch.assign(
        events.begin() + static_cast<std::ptrdiff_t>(start),
        events.begin() + static_cast<std::ptrdiff_t>(std::min(events.size(), start + 1000)));
    for (const auto& r : boards.apply(batch)) {
      if (r.status != bk::service::UpdateStatus::applied) fail("not applied: " + r.reason);
    }
  }
  return static_cast<double>(events.size()) / seconds_since(t0);
}

Bench::ClusterFigures Bench::bench_cluster() {
  ClusterFigures f;
  bk::redis::Options seed = bk::redis::parse_url(cluster_url());
  seed.cluster = true;
  bk::redis::Connection cluster(seed);
  if (cluster.masters() != 3) fail("the test cluster has not 3 masters");
  bk::redis::Connection single(bk::redis::parse_url(redis_url));
  cluster_work(f, cluster, single);
  cluster_routing(f, cluster, single);
  drop_cluster_keys(single, cluster, prefix);
  return f;
}

std::vector<Bench::BoardEvent> Bench::cluster_events() const {
  std::vector<BoardEvent> events;
  std::mt19937_64 gen(13);
  for (std::int64_t i = 0; i < opt.cluster_events; ++i) {
    events.push_back({static_cast<int>(gen() % 30), "c" + std::to_string(gen() % 10'000),
                      static_cast<std::int64_t>(1 + gen() % 9),
                      bk::to_epoch_ms(day) + 3'600'000 + i});
  }
  return events;
}

void Bench::cluster_work(ClusterFigures& f, bk::redis::Connection& cluster,
                         bk::redis::Connection& single) {
  const std::vector<BoardEvent> events = cluster_events();
  f.events = opt.cluster_events;
  std::vector<std::string> even, hashed;
  place_boards(f.hashed_boards, even, hashed);
  const std::string single_prefix = prefix + "cs";
  const std::vector<std::string> single_streams{single_prefix + ":events"};
  f.single = cluster_ingest(single, cluster_config(redis_url, false, single_prefix, single_streams),
                            single_prefix, single_streams, even, events);
  {
    // Each master feeds a replica, which costs inside the commands (the effects of every
    // script and the XCLAIM of every entry read are propagated): the single node with a
    // replica too is the like-for-like baseline.
    const bk::redis::Options where = bk::redis::parse_url(redis_url);
    Replica replica(where.host, where.port, dir + "/replica");
    const std::string replicated_prefix = prefix + "cr";
    const std::vector<std::string> replicated_streams{replicated_prefix + ":events"};
    f.replicated = cluster_ingest(
        single, cluster_config(redis_url, false, replicated_prefix, replicated_streams),
        replicated_prefix, replicated_streams, even, events);
  }
  const std::string spread_prefix = prefix + "cm";
  const auto streams = spread_streams(spread_prefix);
  f.spread = cluster_ingest(cluster, cluster_config(cluster_url(), true, spread_prefix, streams),
                            spread_prefix, streams, even, events);
  const std::string one_prefix = prefix + "c1";
  const std::vector<std::string> one_stream{one_prefix + ":{events}"};
  f.one = cluster_ingest(cluster, cluster_config(cluster_url(), true, one_prefix, one_stream),
                         one_prefix, one_stream, even, events);
  const std::string hashed_prefix = prefix + "ch";
  const auto hashed_streams = spread_streams(hashed_prefix);
  f.hashed =
      cluster_ingest(cluster, cluster_config(cluster_url(), true, hashed_prefix, hashed_streams),
                     hashed_prefix, hashed_streams, hashed, events);
}

void Bench::cluster_routing(ClusterFigures& f, bk::redis::Connection& cluster,
                            bk::redis::Connection& single) {
  // 12: one board through the update path, the sides taking turns. Straight to the board's
  // master: a key prefix whose own keys (<prefix>:boards, :deployment) live there too.
  const std::string board = "cb1";
  const std::string direct_prefix = direct_prefix_for(prefix, board);
  bk::redis::Connection direct(master_of(cluster, board));
  const bk::Config on_single =
      bk::parse_config(cluster_config(redis_url, false, prefix + "rs", {}), "single.yaml", {});
  const bk::Config on_cluster =
      bk::parse_config(cluster_config(cluster_url(), true, prefix + "rc", {}), "cluster.yaml", {});
  const bk::Config on_master =
      bk::parse_config(cluster_config(cluster_url(), false, direct_prefix, {}), "direct.yaml", {});
  std::vector<double> single_rates, cluster_rates, direct_rates;
  for (int round = 0; round < opt.rounds; ++round) {
    const auto updates = update_events(board, opt.events);
    if (round % 2 == 0) cluster_rates.push_back(apply_rate(cluster, on_cluster, updates));
    direct_rates.push_back(apply_rate(direct, on_master, updates));
    if (round % 2 == 1) cluster_rates.push_back(apply_rate(cluster, on_cluster, updates));
    single_rates.push_back(apply_rate(single, on_single, updates));
  }
  f.single_rate = median(single_rates);
  f.cluster_rate = median(cluster_rates);
  f.direct_rate = median(direct_rates);
  // Check: both sides hold the same best member and points.
  bk::service::Leaderboards a(on_single, single, bk::Clock(day + bk::Millis{43'200'000}));
  bk::service::Leaderboards b(on_cluster, cluster, bk::Clock(day + bk::Millis{43'200'000}));
  const auto top_a = a.reads().top_at({a.resolve(board, "daily", std::nullopt)}, 0, 1);
  const auto top_b = b.reads().top_at({b.resolve(board, "daily", std::nullopt)}, 0, 1);
  if (top_a.empty() || top_b.empty() || top_a[0].points != top_b[0].points ||
      top_a[0].member != top_b[0].member) {
    fail("routing phase: the cluster's board differs from the single node's");
  }
}

// Rows 11 and 12, and where row 11's server time went.
void print_cluster(const Bench::ClusterFigures& f) {
  const double one_node = f.replicated.at(0).usec;  // with a replica, as each master has
  const auto busiest = [](const std::vector<Bench::ServerUse>& v) {
    double most = 0;
    for (const Bench::ServerUse& u : v) most = std::max(most, u.usec);
    return most;
  };
  const auto shares = [&](const std::vector<Bench::ServerUse>& v) {
    std::string out;
    for (const Bench::ServerUse& u : v)
      out += (out.empty() ? "" : " / ") + fmt("%.0f%%", 100 * u.usec / one_node);
    return out;
  };
  row("11 Redis work per master, 30 boards, 10 each",
      "busiest " + fmt("%.0f%%", 100 * busiest(f.spread) / one_node) + " (" + shares(f.spread) +
          ")",
      "one node + replica " + fmt("%.1f us/event", one_node / static_cast<double>(f.events)),
      fmt("%.2fx", busiest(f.spread) / one_node), "<= 0.45x");
  const double bare = f.single.at(0).usec;
  row("  against one node without a replica", "",
      "one node " + fmt("%.1f us/event", bare / static_cast<double>(f.events)),
      fmt("%.2fx", busiest(f.spread) / bare), "");
  row("  the same, one stream for all boards",
      "busiest " + fmt("%.0f%%", 100 * busiest(f.one) / one_node) + " (" + shares(f.one) + ")", "",
      fmt("%.2fx", busiest(f.one) / one_node), "");
  row("  cb0..cb29 as they hash (" + std::to_string(f.hashed_boards[0]) + "/" +
          std::to_string(f.hashed_boards[1]) + "/" + std::to_string(f.hashed_boards[2]) + ")",
      "busiest " + fmt("%.0f%%", 100 * busiest(f.hashed) / one_node) + " (" + shares(f.hashed) +
          ")",
      "", fmt("%.2fx", busiest(f.hashed) / one_node), "");
  row("12 one board through the cluster (events/s)",
      fmt_int(static_cast<std::int64_t>(f.cluster_rate)) + "/s",
      "its master, no routing " + fmt_int(static_cast<std::int64_t>(f.direct_rate)) + "/s",
      fmt("%.2fx", f.cluster_rate / f.direct_rate), ">= 0.95x");
  row("  against the single node", "",
      "single node " + fmt_int(static_cast<std::int64_t>(f.single_rate)) + "/s",
      fmt("%.2fx", f.cluster_rate / f.single_rate), "");
  std::printf("\nalso: row 11 us/event by command: one node + replica %s; without %s",
              breakdown(f.replicated.at(0), f.events).c_str(),
              breakdown(f.single.at(0), f.events).c_str());
  for (std::size_t i = 0; i < f.spread.size(); ++i) {
    std::printf("; master %zu %s", i + 1, breakdown(f.spread[i], f.events).c_str());
  }
  std::printf("\n");
}

}  // namespace bk_bench
