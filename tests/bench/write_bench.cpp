// Rows 24-26 of the serve benchmark (see write_bench.h).
#include "write_bench.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace bk::bench {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

// Whether a single write's answer applied the event and stands in `periods` periods; with
// `below` > 0, also whether the member was ranked below `below` before (it was spilled).
bool applied(const std::string& body, std::size_t periods, std::int64_t below = 0) {
  const json a = json::parse(body, nullptr, false);
  if (a.is_discarded() || !a.value("applied", false) || !a["periods"].is_array() ||
      a["periods"].size() != periods) {
    return false;
  }
  const json& p = a["periods"][0];
  if (!p.contains("rank") || !p["rank"].is_number_integer()) return false;
  return below == 0 || p.value("previous_rank", std::int64_t{0}) > below;
}

std::string score_target(const std::string& board, const std::string& member) {
  return "/v1/boards/" + board + "/members/" + member + "/scores";
}

// Row 24: value-1 writes of `board`'s hot members, round robin, from 16 connections.
PostLoadFigures hot_writes(const WriteSetup& s, const std::string& board, std::size_t periods) {
  PostLoad load;
  load.connections = s.connections;
  load.seconds = s.seconds;
  load.token = s.token;
  load.request = [&](std::int64_t i) {
    const std::string& m = s.hot[static_cast<std::size_t>(i) % s.hot.size()];
    return PostRequest{score_target(board, m), R"({"value": 1})"};
  };
  load.check = [&](std::int64_t, const std::string& body) { return applied(body, periods); };
  return post_load(s.port, load);
}

// Row 25: one write to each spilled member, in order, until they or the seconds run out.
PostLoadFigures spilled_writes(const WriteSetup& s) {
  PostLoad load;
  load.connections = s.connections;
  load.seconds = s.seconds;
  load.max_requests = static_cast<std::int64_t>(s.spilled.size());
  load.token = s.token;
  load.request = [&](std::int64_t i) {
    return PostRequest{score_target(s.board, s.spilled[static_cast<std::size_t>(i)]),
                       R"({"value": 1})"};
  };
  const auto hot = static_cast<std::int64_t>(s.hot.size());
  load.check = [hot](std::int64_t, const std::string& body) { return applied(body, 1, hot); };
  return post_load(s.port, load);
}

// Row 26's i-th event (the same on both sides): 20,011 members, values 1-100.
std::string event_member(std::int64_t i) {
  return "e" + std::to_string(i * 7919 % 20011);
}
std::int64_t event_value(std::int64_t i) {
  return 1 + i % 100;
}

PostLoadFigures batch_writes(const WriteSetup& s) {
  PostLoad load;
  load.connections = s.batch_connections;
  load.seconds = 600;  // a bound: the count ends it
  load.max_requests = s.events / 1000;
  load.token = s.token;
  load.request = [&](std::int64_t r) {
    json events = json::array();
    for (std::int64_t i = r * 1000; i < (r + 1) * 1000; ++i) {
      events.push_back(
          {{"board", s.batch_board}, {"member", event_member(i)}, {"value", event_value(i)}});
    }
    return PostRequest{"/v1/events", json{{"events", events}}.dump()};
  };
  load.check = [](std::int64_t, const std::string& body) {
    const json a = json::parse(body, nullptr, false);
    return !a.is_discarded() && a.value("applied", 0) == 1000;
  };
  return post_load(s.port, load);
}

// The same events through the stream and `ingest --drain`: events/s.
double ingest_rate(const WriteSetup& s, bk::redis::Connection& conn) {
  const std::int64_t events = s.events / 1000 * 1000;
  for (std::int64_t start = 0; start < events; start += 1000) {
    std::vector<bk::redis::Args> batch;
    for (std::int64_t i = start; i < start + 1000; ++i) {
      batch.push_back({"XADD", s.stream, "*", "board", s.stream_board, "member", event_member(i),
                       "value", std::to_string(event_value(i))});
    }
    for (const auto& r : conn.pipeline(batch)) r.checked();
  }
  const double seconds = s.ingest_drain();
  if (conn.command({"XLEN", s.stream + ":dead"}).checked().as_int() != 0) {
    fail("ingest dead-lettered some of row 26's events");
  }
  return static_cast<double>(events) / seconds;
}

// Both boards of row 26 hold the same points for members e0..e99 (those the events hit) in
// every period.
void same_boards(const WriteSetup& s) {
  httplib::Client client("127.0.0.1", s.port);
  client.set_url_encode(false);
  std::string ids;
  for (int i = 0; i < 100; ++i) ids += (i > 0 ? ",e" : "e") + std::to_string(i);
  for (const char* period : {"daily", "weekly", "monthly"}) {
    const auto points = [&](const std::string& board) {
      const std::string target = "/v1/boards/" + board + "/" + period + "/members?ids=" + ids;
      const auto r = client.Get(target.c_str());
      if (!r || r->status != 200) fail("GET " + target + " failed");
      json by_member = json::object();
      const json answer = json::parse(r->body);
      for (const auto& record : answer["records"]) {
        by_member[record["member"].get<std::string>()] = record["points"];
      }
      if (by_member.empty()) fail("GET " + target + ": " + r->body.substr(0, 300));
      return by_member;
    };
    const json http = points(s.batch_board), stream = points(s.stream_board);
    if (http != stream) {
      fail(std::string("row 26: the boards differ in ") + period + ":\n" +
           http.dump().substr(0, 400) + "\n" + stream.dump().substr(0, 400));
    }
  }
}

void row(const std::string& what, const std::string& ours, const std::string& baseline,
         const std::string& ratio, const std::string& target) {
  std::printf("%-44s %-24s %-34s %-8s %s\n", what.c_str(), ours.c_str(), baseline.c_str(),
              ratio.c_str(), target.c_str());
}

}  // namespace

std::string write_boards_yaml() {
  std::string text;
  for (const char* name : {"sv3", "eh", "es"}) {
    text += std::string("  - name: ") + name +
            "\n    periods: [daily, weekly, monthly]\n    max_points: 1000000\n"
            "    hot_keep: 1000\n    display: 10\n    retention: {default: 30d}\n";
  }
  return text;
}

void forget_keys(bk::redis::Connection& conn, const std::string& prefix) {
  std::string cursor = "0";
  do {
    const auto r = conn.command({"SCAN", cursor, "MATCH", prefix + ":*", "COUNT", "1000"});
    cursor = r.checked().at(0).as_string();
    for (const auto& key : r.at(1).elements) conn.command({"DEL", key.as_string()});
  } while (cursor != "0");
}

WriteFigures write_rows(const WriteSetup& setup, bk::redis::Connection& conn) {
  if (setup.hot.empty() || setup.spilled.empty()) fail("rows 24-25 need hot and spilled members");
  WriteFigures f;
  f.hot = hot_writes(setup, setup.board, 1);
  f.hot3 = hot_writes(setup, setup.board3, 3);
  f.spilled = spilled_writes(setup);
  f.batch = batch_writes(setup);
  f.events = f.batch.requests * 1000;
  f.batch_events_per_s = static_cast<double>(f.events) / f.batch.seconds;
  f.ingest_events_per_s = ingest_rate(setup, conn);
  same_boards(setup);
  return f;
}

void print_write_rows(const WriteFigures& f, double zincrby_rps, double zincrby_p99_ms) {
  char a[64], b[64], c[64];
  std::snprintf(a, sizeof a, "%.0f/s p50 %.2f p99 %.2f ms", f.hot.rps, f.hot.p50_ms, f.hot.p99_ms);
  std::snprintf(b, sizeof b, "ZINCRBY %.0f/s p99 %.2f ms", zincrby_rps, zincrby_p99_ms);
  std::snprintf(c, sizeof c, "%.2fx", f.hot.rps / zincrby_rps);
  row("24 POST .../scores, hot members (req/s)", a, b, c, ">= 0.3x, p99 < 10 ms");
  std::snprintf(a, sizeof a, "%.0f/s p50 %.2f p99 %.2f ms", f.hot3.rps, f.hot3.p50_ms,
                f.hot3.p99_ms);
  std::snprintf(c, sizeof c, "%.2fx", f.hot3.rps / f.hot.rps);
  row("   (a board of 3 periods, the same writes)", a, "against one period", c, "report");
  std::snprintf(a, sizeof a, "%.0f/s p50 %.2f p99 %.2f ms", f.spilled.rps, f.spilled.p50_ms,
                f.spilled.p99_ms);
  std::snprintf(b, sizeof b, "%lld spilled members, one write each",
                static_cast<long long>(f.spilled.requests));
  row("25 POST .../scores, spilled (rehydrating)", a, b, "", "p99 < 15 ms");
  std::snprintf(a, sizeof a, "%.0f events/s", f.batch_events_per_s);
  std::snprintf(b, sizeof b, "ingest --drain %.0f events/s", f.ingest_events_per_s);
  std::snprintf(c, sizeof c, "%.2fx", f.batch_events_per_s / f.ingest_events_per_s);
  row("26 POST /v1/events, 1,000 a request", a, b, c, ">= 0.8x");
  std::printf("   (row 26: %lld events, 4 connections, p99 %.2f ms a request)\n",
              static_cast<long long>(f.events), f.batch.p99_ms);
}

}  // namespace bk::bench
