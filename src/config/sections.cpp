// The config's ingest, serve and history sections, and the stream rules the ingest
// command applies to its --stream flags too.
#include <algorithm>

#include "config/loader.h"
#include "redis/slots.h"

namespace bk::config_detail {
namespace {

const std::vector<std::string_view> kServeKeys{
    "listen", "tokens_file", "admin_tokens_file", "write_tokens_file", "header_timeout",
    "body_timeout", "idle_timeout", "read_timeout", "max_connections", "cors_origins",
    "cache_max_age", "console", "cold_rank_memory_mb", "rate_limits",
    // what clients may hold at once, and the probes' own listener
    "bodies_in_flight_mb", "bodies_in_flight_per_token_mb", "requests_in_progress_per_token",
    "probe_listen"};
const std::vector<std::string_view> kIngestKeys{"stream", "group",       "reclaim_idle",
                                                "trim",   "dead_maxlen", "max_wait"};

}  // namespace

// Why `stream` cannot be consumed after `earlier` ones; nullopt when it can.
std::optional<std::string> stream_problem(const std::vector<std::string>& earlier,
                                          const std::string& stream) {
  if (stream.empty()) return std::string("a stream key must not be empty");
  const std::string_view suffix = ":dead";
  for (const std::string& other : earlier) {
    if (other == stream) return "stream " + quoted(stream) + " is listed twice";
    for (const auto& [dead, of] : {std::pair{&other, &stream}, std::pair{&stream, &other}}) {
      if (*dead == *of + std::string(suffix)) {
        return "stream " + quoted(*dead) + " is the dead-letter stream of " + quoted(*of) +
               ": its entries would be dead letters of their own; consume only " + quoted(*of);
      }
    }
  }
  return std::nullopt;
}

void Loader::parse_streams(const Entry& entry, std::vector<std::string>& streams) {
  const std::string what =
      "ingest.stream must be a stream key or a list of stream keys (e.g. [lb:events, "
      "lb:more]), not ";
  std::vector<yaml::Node> items;
  if (entry.value.is_scalar()) {
    items.push_back(entry.value);
  } else if (entry.value.is_sequence() && entry.value.size() > 0) {
    for (const auto item : entry.value.items()) items.push_back(item);
  } else {
    report(entry, what + (entry.value.is_sequence() ? "an empty list" : kind_of(entry.value)));
    return;
  }
  std::vector<std::string> read;
  std::vector<Pos> positions;
  bool ok = true;
  for (const yaml::Node& item : items) {
    if (!item.is_scalar()) {
      report(item, what + "a list holding " + kind_of(item));
      ok = false;
      continue;
    }
    const std::string& stream = item.scalar();
    if (auto problem = stream_problem(read, stream)) {
      const auto first = std::find(read.begin(), read.end(), stream);
      if (first != read.end()) {
        *problem +=
            " (first at " + where(positions[static_cast<std::size_t>(first - read.begin())]) + ")";
      }
      report(item, "ingest.stream: " + *problem);
      ok = false;
      continue;
    }
    read.push_back(stream);
    positions.push_back(pos_of(item));
  }
  if (ok) streams = std::move(read);
}

void Loader::parse_history(const Entry& entry, const std::vector<BoardConfig>& boards,
                           HistoryConfig& history) {
  const auto map = read_map(entry, "history");
  if (!map) return;
  const Fields f = fields(*map, "in the history section", {"retention", "large_period_rows"});
  if (const auto l = f.get("large_period_rows")) {
    if (const auto v = read_int(*l, "history.large_period_rows")) {
      if (*v < 1) {
        report(*l, "history.large_period_rows must be at least 1, not " + std::to_string(*v) +
                       " (default 100000: periods archived with this many members or more get "
                       "a history table of their own)");
      } else {
        history.large_period_rows = *v;
      }
    }
  }
  const auto e = f.get("retention");
  if (!e) return;
  const auto retention = read_map(*e, "history.retention");
  if (!retention) return;
  std::vector<std::string_view> used;  // every period name of every board entry
  for (const BoardConfig& b : boards) {
    for (const PeriodSpec& p : b.periods) {
      if (std::find(used.begin(), used.end(), p.name) == used.end()) used.push_back(p.name);
    }
  }
  for (const auto& [name, value] : entries(*retention, "in history.retention")) {
    if (name != "default" && std::find(used.begin(), used.end(), name) == used.end()) {
      report(value.key, "history.retention." + name + " names a period no board uses (" +
                            (used.empty() ? std::string("none") : alternatives(used)) +
                            "); remove it or fix the name");
      continue;
    }
    if (value.value.is_scalar() && value.value.scalar() == "forever") {
      history.retention[name] = std::nullopt;
      continue;
    }
    const auto d = read_duration(value, "history.retention." + name);
    if (!d) continue;
    if (d->count() <= 0) {
      report(value.value, "history.retention." + name +
                              " must be longer than 0 (or forever): it is how long history "
                              "is kept after a period ends");
      continue;
    }
    history.retention[name] = *d;
  }
}

void Loader::parse_ingest(const Entry& entry, IngestConfig& ingest, bool cluster) {
  const auto map = read_map(entry, "ingest");
  if (!map) return;
  const Fields f = fields(*map, "in the ingest section", kIngestKeys);
  if (const auto e = f.get("stream")) {
    parse_streams(*e, ingest.streams);
    if (cluster) {
      for (const std::string& stream : ingest.streams) {
        if (auto problem = cluster_stream_problem(stream)) report(*e, "ingest." + *problem);
      }
    }
  }
  if (const auto e = f.get("group")) {
    if (const auto group = read_string(*e, "ingest.group")) {
      if (group->empty()) {
        report(*e, "ingest.group must not be empty (default boardkeeper)");
      } else {
        ingest.group = *group;
      }
    }
  }
  if (const auto e = f.get("reclaim_idle")) {
    if (const auto d = read_duration(*e, "ingest.reclaim_idle")) {
      if (d->count() <= 0) {
        report(*e,
               "ingest.reclaim_idle must be longer than 0 (default 30s): entries pending "
               "this long at another consumer are taken over");
      } else {
        ingest.reclaim_idle = *d;
      }
    }
  }
  if (const auto e = f.get("max_wait")) {
    if (const auto d = read_duration(*e, "ingest.max_wait")) {
      if (d->count() <= 0) {
        report(*e,
               "ingest.max_wait must be longer than 0 (default 60s): ingest --drain gives up "
               "after this long without progress");
      } else {
        ingest.max_wait = *d;
      }
    }
  }
  if (const auto e = f.get("trim")) {
    if (const auto v = read_choice<bool>(*e, "ingest.trim", {{"true", true}, {"false", false}})) {
      ingest.trim = *v;
    }
  }
  if (const auto e = f.get("dead_maxlen")) {
    if (const auto v = read_int(*e, "ingest.dead_maxlen")) {
      if (*v < 1) {
        report(*e, "ingest.dead_maxlen must be at least 1, not " + std::to_string(*v) +
                       " (default 100000: the dead-letter stream is capped near this length)");
      } else {
        ingest.dead_maxlen = *v;
      }
    }
  }
}

void Loader::parse_serve(const Entry& entry, ServeConfig& serve) {
  const auto map = read_map(entry, "serve");
  if (!map) return;
  const Fields f = fields(*map, "in the serve section", kServeKeys);
  for (const auto& [key, into] : {std::pair<const char*, std::string*>{"listen", &serve.listen},
                                  {"probe_listen", &serve.probe_listen}}) {
    const auto e = f.get(key);
    if (!e) continue;
    const std::string name = std::string("serve.") + key;
    if (const auto listen = read_string(*e, name)) {
      if (listen->empty() && into == &serve.probe_listen) continue;  // none
      const auto colon = listen->rfind(':');
      if (colon == std::string::npos || colon + 1 == listen->size() ||
          listen->find_first_not_of("0123456789", colon + 1) != std::string::npos) {
        report(*e, name + " must be HOST:PORT (e.g. 127.0.0.1:8080 or 0.0.0.0:8080), not '" +
                       *listen + "'");
      } else {
        *into = *listen;
      }
    }
  }
  if (const auto e = f.get("tokens_file")) {
    if (const auto file = read_string(*e, "serve.tokens_file")) {
      serve.tokens_file = *file;
      serve.where = where(e->pos());
    }
  }
  if (const auto e = f.get("admin_tokens_file")) {
    if (const auto file = read_string(*e, "serve.admin_tokens_file")) {
      serve.admin_tokens_file = *file;
      serve.admin_where = where(e->pos());
    }
  }
  if (const auto e = f.get("write_tokens_file")) {
    if (const auto file = read_string(*e, "serve.write_tokens_file")) {
      serve.write_tokens_file = *file;
      serve.write_where = where(e->pos());
    }
  }
  parse_serve_limits(f, serve);
  parse_serve_shares(f, serve);
  if (const auto e = f.get("cors_origins")) parse_cors_origins(*e, serve.cors_origins);
  if (const auto e = f.get("rate_limits")) parse_rate_limits(*e, serve.rate_limits);
  if (const auto e = f.get("console")) {
    if (const auto v = read_choice<bool>(*e, "serve.console", {{"true", true}, {"false", false}})) {
      serve.console = *v;
    }
  }
}

void Loader::parse_serve_limits(const Fields& f, ServeConfig& serve) {
  for (const auto& [key, into] :
       {std::pair<const char*, Millis*>{"header_timeout", &serve.header_timeout},
        {"body_timeout", &serve.body_timeout},
        {"idle_timeout", &serve.idle_timeout},
        {"read_timeout", &serve.read_timeout}}) {
    const auto e = f.get(key);
    if (!e) continue;
    if (const auto d = read_duration(*e, std::string("serve.") + key)) {
      if (d->count() <= 0) {
        report(*e, std::string("serve.") + key + " must be longer than 0");
      } else {
        *into = *d;
      }
    }
  }
  if (const auto e = f.get("max_connections")) {
    if (const auto v = read_int(*e, "serve.max_connections")) {
      if (*v < 1 || *v > 1000000) {
        report(*e, "serve.max_connections must be in [1, 1000000], not " + std::to_string(*v));
      } else {
        serve.max_connections = *v;
      }
    }
  }
  if (const auto e = f.get("cold_rank_memory_mb")) {
    if (const auto v = read_int(*e, "serve.cold_rank_memory_mb")) {
      if (*v < 0 || *v > 1048576) {
        report(*e, "serve.cold_rank_memory_mb must be in [0, 1048576] (MiB), not " +
                       std::to_string(*v));
      } else {
        serve.cold_rank_memory_mb = *v;
      }
    }
  }
  if (const auto e = f.get("cache_max_age")) {
    if (const auto d = read_duration(*e, "serve.cache_max_age")) {
      if (d->count() < 0 || d->count() % 1000 != 0) {
        report(*e,
               "serve.cache_max_age must be whole seconds (e.g. 0s, 30s, 5m), 0s for no caching");
      } else {
        serve.cache_max_age = *d;
      }
    }
  }
}

// What clients may hold at once (after max_connections, which bounds the request share).
void Loader::parse_serve_shares(const Fields& f, ServeConfig& serve) {
  const auto read_within = [&](const char* key, std::int64_t high,
                               const std::string& unit) -> std::optional<std::int64_t> {
    const auto e = f.get(key);
    if (!e) return std::nullopt;
    const std::string name = std::string("serve.") + key;
    const auto v = read_int(*e, name);
    if (v && (*v < 1 || *v > high)) {
      report(*e, name + " must be in [1, " + std::to_string(high) + "]" + unit + ", not " +
                     std::to_string(*v));
      return std::nullopt;
    }
    return v;
  };
  if (const auto v = read_within("bodies_in_flight_mb", 1048576, " (MiB)")) {
    serve.bodies_in_flight_mb = *v;
  }
  serve.bodies_in_flight_per_token_mb =
      read_within("bodies_in_flight_per_token_mb", serve.bodies_in_flight_mb,
                  " (MiB, at most serve.bodies_in_flight_mb)");
  serve.requests_in_progress_per_token = read_within(
      "requests_in_progress_per_token", serve.max_connections, " (at most serve.max_connections)");
}

// Each an origin as browsers send it (scheme://host[:port], no path), or "*" for any.
void Loader::parse_cors_origins(const Entry& entry, std::vector<std::string>& origins) {
  if (!entry.value.is_sequence()) {
    report(entry,
           "serve.cors_origins must be a list of origins (e.g. [https://app.example.com]), "
           "not " +
               kind_of(entry.value));
    return;
  }
  for (const auto item : entry.value.items()) {
    if (!item.is_scalar()) {
      report(item, "serve.cors_origins must list origins, not " + kind_of(item));
      continue;
    }
    const std::string& origin = item.scalar();
    const std::size_t scheme = origin.find("://");
    const bool web = origin.rfind("http://", 0) == 0 || origin.rfind("https://", 0) == 0;
    if (origin != "*" && (!web || origin.size() == scheme + 3 ||
                          origin.find_first_of("/?# ", scheme + 3) != std::string::npos)) {
      report(item, "serve.cors_origins: " + quoted(origin) +
                       " is not an origin: scheme://host[:port] without a path "
                       "(e.g. https://app.example.com), or *");
      continue;
    }
    origins.push_back(origin);
  }
}

}  // namespace bk::config_detail

namespace bk {

using config_detail::quoted;
using config_detail::stream_problem;

std::optional<std::string> stream_list_problem(const std::vector<std::string>& streams) {
  if (streams.empty()) return std::string("no stream to consume");
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const std::vector<std::string> earlier(streams.begin(),
                                           streams.begin() + static_cast<std::ptrdiff_t>(i));
    if (auto problem = stream_problem(earlier, streams[i])) return problem;
  }
  return std::nullopt;
}

std::optional<std::string> cluster_stream_problem(const std::string& stream) {
  if (!redis::hash_tag(stream).empty()) return std::nullopt;
  return "stream " + quoted(stream) +
         ": on a Redis Cluster a stream and its dead-letter stream must share a hash slot; put "
         "a hash tag in its name, e.g. " +
         quoted(stream.substr(0, stream.rfind(':') + 1) + "{" +
                stream.substr(stream.rfind(':') + 1) + "}");
}

}  // namespace bk
