// YAML -> typed, validated Config. The loader collects every problem it can find, each
// with the file, line and column of the node at fault, before refusing the file.
#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>

#include "config/yaml_tree.h"
#include "core/cron.h"
#include "core/duration.h"
#include "core/redact.h"
#include "core/text.h"
#include "core/validate.h"
#include "redis/slots.h"
#include "redis/url.h"

namespace bk {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// "a, b, c"
std::string list(const std::vector<std::string_view>& names) {
  std::string out;
  for (const std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// "a, b or c"
std::string alternatives(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// 1-based position of a node; the start of the file when yaml-cpp has none (empty document).
struct Pos {
  int line = 1;
  int column = 1;
};

Pos pos_of(const yaml::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

Pos pos_of(const yaml::Node& node) {
  return pos_of(node.mark());
}

std::string kind_of(const yaml::Node& node) {
  switch (node.type()) {
    case yaml::Type::scalar:
      return "the scalar " + quoted(node.scalar());
    case yaml::Type::sequence:
      return "a list";
    case yaml::Type::map:
      return "a map";
    case yaml::Type::null:
    case yaml::Type::undefined:
      break;
  }
  return "nothing";
}

bool is_blank(const yaml::Node& node) {
  return !node.defined() || node.is_null();
}

// One `key: value` pair of a map.
struct Entry {
  yaml::Node key;
  yaml::Node value;
  // Where a problem with the value is shown: the value, or the key when the value is empty
  // (yaml-cpp puts an empty value's mark on the following line).
  Pos pos() const { return is_blank(value) ? pos_of(key) : pos_of(value); }
};

using Entries = std::vector<std::pair<std::string, Entry>>;

// The known keys of one map, by name.
class Fields {
 public:
  explicit Fields(Entries entries) : entries_(std::move(entries)) {}
  std::optional<Entry> get(std::string_view name) const {
    for (const auto& [key, entry] : entries_) {
      if (key == name) return entry;
    }
    return std::nullopt;
  }

 private:
  Entries entries_;
};

bool is_custom_period_name(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool is_sql_identifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool is_glob(std::string_view pattern) {
  return pattern.find_first_of("*?[]") != std::string_view::npos;
}

std::optional<std::string> postgres_url_problem(std::string_view url) {
  for (const std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (starts_with(url, scheme) && url.size() > scheme.size()) return std::nullopt;
  }
  return "is not a PostgreSQL URL (" + describe_url_scheme(url) +
         "); expected postgresql://[user[:password]@]host[:port]/dbname";
}

const std::vector<std::string_view> kTopKeys{"redis", "postgres", "ingest",
                                             "serve", "history",  "boards"};
const std::vector<std::string_view> kServeKeys{"listen",       "tokens_file",  "header_timeout",
                                               "body_timeout", "idle_timeout", "max_connections",
                                               "cors_origins", "cache_max_age"};
const std::vector<std::string_view> kRedisKeys{"url", "key_prefix", "cluster", "nodes", "tls"};
const std::vector<std::string_view> kTlsKeys{"ca_file", "cert_file", "key_file", "server_name"};
const std::vector<std::string_view> kPostgresKeys{"url", "schema"};
const std::vector<std::string_view> kIngestKeys{"stream", "group",       "reclaim_idle",
                                                "trim",   "dead_maxlen", "max_wait"};
const std::vector<std::string_view> kBoardKeys{
    "name",    "periods",         "timezone",   "order",      "tie_break",
    "update",  "time_resolution", "min_points", "max_points", "hot_keep",
    "display", "max_clock_skew",  "archive",    "retention",  "dedupe_window"};
const std::vector<std::string_view> kArchiveKeys{"grace"};
const std::vector<std::string_view> kCustomPeriodKeys{"name", "cron"};
constexpr std::string_view kBuiltinPeriods =
    "hourly, daily, weekly, monthly, yearly, alltime or a custom period {name: NAME, cron: "
    "\"MIN HOUR DOM MON DOW\"}";

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

struct Problem {
  Pos pos;
  bool positioned = true;
  std::string text;
};

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}

  Config load(const yaml::Node& root, const ConfigOverrides& overrides);

  void report(Pos pos, std::string message) {
    problems_.push_back(Problem{pos, true, std::move(message)});
  }
  void report(const yaml::Node& node, std::string message) {
    report(pos_of(node), std::move(message));
  }
  void report(const Entry& entry, std::string message) { report(entry.pos(), std::move(message)); }
  void report_unpositioned(std::string message) {
    problems_.push_back(Problem{Pos{}, false, std::move(message)});
  }

  // "FILE:LINE:COLUMN: message" in file order; problems without a position last.
  std::vector<std::string> messages() const {
    std::vector<Problem> sorted = problems_;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Problem& a, const Problem& b) {
      if (a.positioned != b.positioned) return a.positioned;
      if (a.pos.line != b.pos.line) return a.pos.line < b.pos.line;
      return a.pos.column < b.pos.column;
    });
    std::vector<std::string> out;
    out.reserve(sorted.size());
    for (const Problem& p : sorted) {
      out.push_back(p.positioned ? where(p.pos) + ": " + p.text : p.text);
    }
    return out;
  }

  std::string where(Pos pos) const {
    return path_ + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
  }

 private:
  std::string path_;
  std::vector<Problem> problems_;

  std::size_t problem_count() const { return problems_.size(); }

  Entries entries(const yaml::Node& map, std::string_view context);
  Fields fields(const yaml::Node& map, std::string_view context,
                const std::vector<std::string_view>& known);

  std::optional<yaml::Node> read_map(const Entry& entry, std::string_view key);
  std::optional<std::string> read_string(const Entry& entry, std::string_view key);
  std::optional<std::int64_t> read_int(const Entry& entry, std::string_view key);
  std::optional<Millis> read_duration(const Entry& entry, std::string_view key);
  template <typename E>
  std::optional<E> read_choice(const Entry& entry, std::string_view key,
                               const std::vector<std::pair<std::string_view, E>>& choices);

  void parse_redis(const Entry& entry, RedisConfig& redis, const ConfigOverrides& overrides);
  void parse_tls(const Entry& entry, RedisTlsConfig& tls);
  void parse_postgres(const Entry& entry, PostgresConfig& postgres,
                      const ConfigOverrides& overrides);
  void parse_ingest(const Entry& entry, IngestConfig& ingest, bool cluster);
  void parse_serve(const Entry& entry, ServeConfig& serve);
  void parse_serve_limits(const Fields& f, ServeConfig& serve);
  void parse_cors_origins(const Entry& entry, std::vector<std::string>& origins);
  void parse_history(const Entry& entry, const std::vector<BoardConfig>& boards,
                     HistoryConfig& history);
  void parse_streams(const Entry& entry, std::vector<std::string>& streams);
  void parse_boards(const Entry& entry, std::vector<BoardConfig>& boards);
  std::optional<BoardConfig> parse_board(const yaml::Node& node);
  bool parse_periods(const Entry& entry, BoardConfig& board, std::vector<Pos>& positions);
  std::optional<PeriodSpec> parse_custom_period(const yaml::Node& node);
};

Entries Loader::entries(const yaml::Node& map, std::string_view context) {
  Entries out;
  if (!map.is_map()) return out;
  for (const auto& [key, value] : map.pairs()) {
    if (!key.is_scalar()) {
      report(key, "keys " + std::string(context) + " must be plain names, not " + kind_of(key));
      continue;
    }
    const std::string& name = key.scalar();
    const auto first =
        std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == name; });
    if (first != out.end()) {
      report(key, "duplicate key " + quoted(name) + " " + std::string(context) + " (first at " +
                      where(pos_of(first->second.key)) + ")");
      continue;
    }
    out.emplace_back(name, Entry{key, value});
  }
  return out;
}

Fields Loader::fields(const yaml::Node& map, std::string_view context,
                      const std::vector<std::string_view>& known) {
  Entries all = entries(map, context);
  Entries kept;
  for (auto& [name, entry] : all) {
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      kept.emplace_back(name, entry);
      continue;
    }
    std::string message = "unknown key " + quoted(name) + " " + std::string(context) +
                          "; known keys are: " + list(known);
    std::string_view closest;
    std::size_t best = 3;
    for (const std::string_view candidate : known) {
      const std::size_t d = edit_distance(name, candidate);
      if (d < best) {
        best = d;
        closest = candidate;
      }
    }
    if (!closest.empty()) message += " (did you mean " + quoted(closest) + "?)";
    report(entry.key, std::move(message));
  }
  return Fields(std::move(kept));
}

std::optional<yaml::Node> Loader::read_map(const Entry& entry, std::string_view key) {
  if (is_blank(entry.value)) return yaml::Node::empty_map();  // `key:` alone: defaults
  if (!entry.value.is_map()) {
    report(entry,
           std::string(key) + " must be a map of `key: value` lines, not " + kind_of(entry.value));
    return std::nullopt;
  }
  return entry.value;
}

std::optional<std::string> Loader::read_string(const Entry& entry, std::string_view key) {
  if (!entry.value.is_scalar()) {
    report(entry, std::string(key) + " must be a string, not " + kind_of(entry.value));
    return std::nullopt;
  }
  return entry.value.scalar();
}

std::optional<std::int64_t> Loader::read_int(const Entry& entry, std::string_view key) {
  if (!entry.value.is_scalar()) {
    report(entry, std::string(key) + " must be a whole number, not " + kind_of(entry.value));
    return std::nullopt;
  }
  std::string_view text = entry.value.scalar();
  if (starts_with(text, "+")) text.remove_prefix(1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    report(entry, std::string(key) + " " + quoted(entry.value.scalar()) +
                      " is outside the 64-bit integer range");
    return std::nullopt;
  }
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    report(entry, std::string(key) + " must be a whole number (e.g. 1000000), not " +
                      quoted(entry.value.scalar()));
    return std::nullopt;
  }
  return value;
}

std::optional<Millis> Loader::read_duration(const Entry& entry, std::string_view key) {
  if (!entry.value.is_scalar()) {
    report(entry,
           std::string(key) + " must be a duration such as 10m, not " + kind_of(entry.value));
    return std::nullopt;
  }
  const auto d = parse_duration(entry.value.scalar());
  if (!d) {
    report(entry, std::string(key) + " " + quoted(entry.value.scalar()) +
                      " is not a duration; expected a whole number and one unit: <n>ms, <n>s, "
                      "<n>m, <n>h, <n>d or <n>w (e.g. 10m, 2d)");
  }
  return d;
}

template <typename E>
std::optional<E> Loader::read_choice(const Entry& entry, std::string_view key,
                                     const std::vector<std::pair<std::string_view, E>>& choices) {
  std::vector<std::string_view> names;
  names.reserve(choices.size());
  for (const auto& choice : choices) names.push_back(choice.first);
  if (entry.value.is_scalar()) {
    for (const auto& [name, value] : choices) {
      if (entry.value.scalar() == name) return value;
    }
  }
  report(entry,
         std::string(key) + " must be " + alternatives(names) + ", not " + kind_of(entry.value));
  return std::nullopt;
}

void Loader::parse_redis(const Entry& entry, RedisConfig& redis, const ConfigOverrides& overrides) {
  const auto map = read_map(entry, "redis");
  if (!map) return;
  const Fields f = fields(*map, "in the redis section", kRedisKeys);
  if (const auto e = f.get("url")) {
    const auto url = read_string(*e, "redis.url");
    if (url) add_url_secrets(*url);
    // An overridden URL need not be valid in the file (it may be a placeholder).
    if (url && !overrides.redis_url) {
      if (const auto problem = redis::scheme_problem(*url)) {
        report(*e, "redis.url " + *problem);
      } else {
        redis.url = *url;
      }
    }
  }
  // The URL connected to: the override's when there is one (checked after the file).
  const std::string effective_url = overrides.redis_url ? *overrides.redis_url : redis.url;
  if (const auto e = f.get("tls")) parse_tls(*e, redis.tls);
  if (const auto e = f.get("cluster")) {
    if (const auto v = read_choice<bool>(*e, "redis.cluster", {{"true", true}, {"false", false}})) {
      redis.cluster = *v;
    }
  }
  if (const auto e = f.get("nodes")) {
    if (!e->value.is_sequence()) {
      report(*e, "redis.nodes must be a list of seed URLs (e.g. [redis://10.0.0.2:6379]), not " +
                     kind_of(e->value));
    } else {
      for (const auto item : e->value.items()) {
        if (!item.is_scalar()) {
          report(item, "redis.nodes must hold URLs, not " + kind_of(item));
          continue;
        }
        const std::string& url = item.scalar();
        add_url_secrets(url);
        if (const auto problem = redis::seed_problem(url, effective_url)) {
          report(item, "redis.nodes: " + *problem);
          continue;
        }
        redis.nodes.push_back(url);
      }
    }
    if (!redis.nodes.empty() && !redis.cluster) {
      report(*e, "redis.nodes lists seeds of a Redis Cluster: set redis.cluster: true too");
    }
  }
  if (redis.cluster) {
    const auto url_entry = f.get("url");
    if (const auto problem = redis::cluster_url_problem(redis.url)) {
      report(url_entry ? *url_entry : entry, "redis.url: " + *problem);
    }
  }
  if (const auto e = f.get("key_prefix")) {
    if (const auto prefix = read_string(*e, "redis.key_prefix")) {
      const bool bad = std::any_of(prefix->begin(), prefix->end(), [](char c) {
        return c == '{' || c == '}' || std::isspace(static_cast<unsigned char>(c)) != 0 ||
               std::iscntrl(static_cast<unsigned char>(c)) != 0;
      });
      if (prefix->empty() || bad) {
        report(*e, "redis.key_prefix " + quoted(*prefix) +
                       " must be non-empty and contain no '{', '}' or whitespace (braces would "
                       "break the boards' Redis Cluster hash tags)");
      } else {
        redis.key_prefix = *prefix;
      }
    }
  }
}

void Loader::parse_tls(const Entry& entry, RedisTlsConfig& tls) {
  const auto map = read_map(entry, "redis.tls");
  if (!map) return;
  const Fields f = fields(*map, "in redis.tls", kTlsKeys);
  const std::pair<std::string_view, std::string*> keys[] = {{"ca_file", &tls.ca_file},
                                                            {"cert_file", &tls.cert_file},
                                                            {"key_file", &tls.key_file},
                                                            {"server_name", &tls.server_name}};
  for (const auto& [key, out] : keys) {
    if (const auto e = f.get(key)) {
      if (auto v = read_string(*e, "redis.tls." + std::string(key))) *out = std::move(*v);
    }
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    report(entry,
           "redis.tls: cert_file and key_file go together (the client certificate of "
           "mutual TLS and its key); set both or neither");
  }
}

void Loader::parse_postgres(const Entry& entry, PostgresConfig& postgres,
                            const ConfigOverrides& overrides) {
  const auto map = read_map(entry, "postgres");
  if (!map) return;
  const Fields f = fields(*map, "in the postgres section", kPostgresKeys);
  if (const auto e = f.get("url")) {
    const auto url = read_string(*e, "postgres.url");
    if (url) add_url_secrets(*url);
    if (url && !overrides.postgres_url) {
      if (const auto problem = postgres_url_problem(*url)) {
        report(*e, "postgres.url " + *problem);
      } else {
        postgres.url = *url;
      }
    }
  }
  if (const auto e = f.get("schema")) {
    if (const auto schema = read_string(*e, "postgres.schema")) {
      if (!is_sql_identifier(*schema)) {
        report(*e, "postgres.schema " + quoted(*schema) +
                       " must be a plain SQL identifier: lower-case letters, digits and _, "
                       "not starting with a digit, at most 63 bytes");
      } else {
        postgres.schema = *schema;
      }
    }
  }
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

std::optional<PeriodSpec> Loader::parse_custom_period(const yaml::Node& node) {
  const std::size_t before = problem_count();
  const Fields f = fields(node, "in a custom period", kCustomPeriodKeys);
  PeriodSpec spec;
  spec.kind = PeriodKind::custom;
  if (const auto e = f.get("name")) {
    if (const auto name = read_string(*e, "the custom period's name")) {
      if (parse_period_kind(*name)) {
        report(*e, "custom period name " + quoted(*name) +
                       " is a built-in period; list it as a plain name or choose another");
      } else if (*name == "default") {
        report(*e, "custom period name 'default' is reserved (retention.default)");
      } else if (!is_custom_period_name(*name)) {
        report(*e, "custom period name " + quoted(*name) +
                       " may only contain lower-case letters, digits, _ and -");
      } else {
        spec.name = *name;
      }
    }
  } else {
    report(node, "custom period has no 'name'; write {name: NAME, cron: \"0 18 * * 5\"}");
  }
  if (const auto e = f.get("cron")) {
    if (const auto text = read_string(*e, "cron")) {
      try {
        spec.cron = std::make_shared<const CronSchedule>(CronSchedule::parse(*text));
      } catch (const UsageError& error) {
        const std::string why = error.what();
        report(*e, why.find(*text) != std::string::npos
                       ? "bad cron expression: " + why
                       : "bad cron expression " + quoted(*text) + ": " + why);
      }
    }
  } else {
    report(node, "custom period has no 'cron'; write {name: NAME, cron: \"0 18 * * 5\"}");
  }
  if (problem_count() != before) return std::nullopt;
  return spec;
}

bool Loader::parse_periods(const Entry& entry, BoardConfig& board, std::vector<Pos>& positions) {
  if (!entry.value.is_sequence()) {
    report(entry, "periods must be a list such as [daily, weekly], not " + kind_of(entry.value));
    return false;
  }
  if (entry.value.size() == 0) {
    report(entry, "periods is empty; list at least one of " + std::string(kBuiltinPeriods));
    return false;
  }
  bool ok = true;
  for (const auto item : entry.value.items()) {
    std::optional<PeriodSpec> spec;
    if (item.is_scalar()) {
      if (const auto kind = parse_period_kind(item.scalar())) {
        spec = PeriodSpec{*kind, item.scalar(), nullptr};
      } else {
        report(item, "unknown period " + quoted(item.scalar()) + "; expected " +
                         std::string(kBuiltinPeriods));
      }
    } else if (item.is_map()) {
      spec = parse_custom_period(item);
    } else {
      report(item,
             "a period must be one of " + std::string(kBuiltinPeriods) + ", not " + kind_of(item));
    }
    if (!spec) {
      ok = false;
      continue;
    }
    const auto same = std::find_if(board.periods.begin(), board.periods.end(),
                                   [&](const PeriodSpec& p) { return p.name == spec->name; });
    if (same != board.periods.end()) {
      const auto first = positions[static_cast<std::size_t>(same - board.periods.begin())];
      report(item,
             "period " + quoted(spec->name) + " is listed twice (first at " + where(first) + ")");
      ok = false;
      continue;
    }
    board.periods.push_back(std::move(*spec));
    positions.push_back(pos_of(item));
  }
  return ok;
}

std::optional<BoardConfig> Loader::parse_board(const yaml::Node& node) {
  if (!node.is_map()) {
    report(node,
           "a board entry must be a map with at least name, periods, max_points and "
           "retention, not " +
               kind_of(node));
    return std::nullopt;
  }
  const std::size_t before = problem_count();
  const Pos at = pos_of(node);
  BoardConfig b;
  b.where = where(at);
  const Fields f = fields(node, "in board entry", kBoardKeys);

  if (const auto e = f.get("name")) {
    if (const auto name = read_string(*e, "name")) {
      if (const auto problem = board_pattern_problem(*name)) {
        report(*e, *problem + " (" + quoted(*name) + ")");
      } else {
        b.pattern = *name;
      }
    }
  } else {
    report(at, "board entry has no 'name' (an exact board name or a glob such as \"game:*\")");
  }
  const std::string label = b.pattern.empty() ? "board entry" : "board " + quoted(b.pattern);

  if (const auto e = f.get("timezone")) {
    if (const auto tz = read_string(*e, "timezone")) {
      b.timezone = *tz;
      try {
        b.zone = date::locate_zone(b.timezone);
      } catch (const std::runtime_error&) {
        report(*e, "unknown time zone " + quoted(b.timezone) +
                       "; use an IANA name such as UTC, Europe/Berlin or Asia/Shanghai");
      }
    }
  } else {
    try {
      b.zone = date::locate_zone(b.timezone);
    } catch (const std::runtime_error& error) {
      report(at, "cannot load the time zone UTC: " + std::string(error.what()));
    }
  }

  std::vector<Pos> period_positions;
  bool periods_ok = false;
  if (const auto e = f.get("periods")) {
    periods_ok = parse_periods(*e, b, period_positions);
  } else {
    report(at, label + " has no 'periods'; list some of " + std::string(kBuiltinPeriods));
  }

  if (const auto e = f.get("order")) {
    if (const auto v =
            read_choice<Order>(*e, "order", {{"desc", Order::desc}, {"asc", Order::asc}})) {
      b.order = *v;
    }
  }
  if (const auto e = f.get("tie_break")) {
    if (const auto v = read_choice<TieBreak>(*e, "tie_break",
                                             {{"earliest", TieBreak::earliest},
                                              {"latest", TieBreak::latest},
                                              {"none", TieBreak::none}})) {
      b.tie = *v;
    }
  }
  if (const auto e = f.get("update")) {
    if (const auto v = read_choice<Policy>(*e, "update",
                                           {{"increment", Policy::increment},
                                            {"best", Policy::best},
                                            {"replace", Policy::replace}})) {
      b.policy = *v;
    }
  }
  if (const auto e = f.get("time_resolution")) {
    if (const auto v =
            read_choice<Millis>(*e, "time_resolution", {{"ms", Millis{1}}, {"s", Millis{1000}}})) {
      b.resolution = *v;
    }
  }

  // Points range.
  bool points_ok = true;
  const auto max_entry = f.get("max_points");
  if (const auto e = f.get("min_points")) {
    if (const auto v = read_int(*e, "min_points")) {
      b.min_points = *v;
    } else {
      points_ok = false;
    }
  }
  if (max_entry) {
    if (const auto v = read_int(*max_entry, "max_points")) {
      b.max_points = *v;
    } else {
      points_ok = false;
    }
  } else {
    report(at, label +
                   " has no 'max_points' (required: the highest points a member may reach, "
                   "checked against the 53-bit score budget)");
    points_ok = false;
  }
  if (points_ok && b.max_points < b.min_points) {
    report(*max_entry, "max_points (" + std::to_string(b.max_points) + ") must be >= min_points (" +
                           std::to_string(b.min_points) + ")");
    points_ok = false;
  }

  // Hot buffer.
  const auto hot_entry = f.get("hot_keep");
  const auto display_entry = f.get("display");
  bool sizes_ok = true;
  if (hot_entry) {
    if (const auto v = read_int(*hot_entry, "hot_keep")) {
      if (*v < 1) {
        report(*hot_entry, "hot_keep must be at least 1, not " + std::to_string(*v));
        sizes_ok = false;
      } else {
        b.hot_keep = *v;
      }
    } else {
      sizes_ok = false;
    }
  }
  if (display_entry) {
    if (const auto v = read_int(*display_entry, "display")) {
      if (*v < 1) {
        report(*display_entry, "display must be at least 1, not " + std::to_string(*v));
        sizes_ok = false;
      } else {
        b.display = *v;
      }
    } else {
      sizes_ok = false;
    }
  }
  if (sizes_ok && b.hot_keep < b.display) {
    const Pos p = hot_entry ? hot_entry->pos() : display_entry ? display_entry->pos() : at;
    report(p, "hot_keep (" + std::to_string(b.hot_keep) + ") must be >= display (" +
                  std::to_string(b.display) + "): every member clients are shown must be hot");
  }

  if (const auto e = f.get("max_clock_skew")) {
    if (const auto d = read_duration(*e, "max_clock_skew")) b.max_clock_skew = *d;
  }
  if (const auto e = f.get("dedupe_window")) {
    if (const auto d = read_duration(*e, "dedupe_window")) {
      if (d->count() < 1000) {
        report(e->pos(), "dedupe_window (" + format_duration(*d) + ") must be at least 1s");
      } else {
        b.dedupe_window = *d;
      }
    }
  }

  bool grace_ok = true;
  if (const auto e = f.get("archive")) {
    if (const auto map = read_map(*e, "archive")) {
      const Fields archive = fields(*map, "in the archive section", kArchiveKeys);
      if (const auto g = archive.get("grace")) {
        if (const auto d = read_duration(*g, "archive.grace")) {
          b.grace = *d;
        } else {
          grace_ok = false;
        }
      }
    } else {
      grace_ok = false;
    }
  }

  // Retention: explicit per period, else `default`; every period needs one, each > grace.
  struct Written {
    Millis value{0};
    Pos pos;
  };
  std::map<std::string, Written> written;
  std::optional<Written> fallback;
  const auto retention_entry = f.get("retention");
  bool retention_ok = true;
  if (retention_entry) {
    if (const auto map = read_map(*retention_entry, "retention")) {
      for (const auto& [name, entry] : entries(*map, "in retention")) {
        const auto d = read_duration(entry, "retention." + name);
        if (!d) {
          retention_ok = false;
          continue;
        }
        if (name == "default") {
          fallback = Written{*d, entry.pos()};
        } else if (b.period(name)) {
          written[name] = Written{*d, entry.pos()};
        } else if (periods_ok) {
          std::vector<std::string_view> used;
          used.reserve(b.periods.size());
          for (const PeriodSpec& p : b.periods) used.push_back(p.name);
          std::string msg = "retention." + name;
          msg += " names a period " + label;
          msg += " does not use (its periods: " + alternatives(used);
          msg += "); remove it or add the period";
          report(entry.key, msg);
        }
      }
    } else {
      retention_ok = false;
    }
  }
  // Periods that failed to parse are already reported; the others are still checked.
  if (retention_ok) {
    bool fallback_reported = false;
    for (const PeriodSpec& p : b.periods) {
      const auto it = written.find(p.name);
      const std::optional<Written> r =
          it != written.end() ? std::optional<Written>(it->second) : fallback;
      if (!r) {
        report(retention_entry ? pos_of(retention_entry->key) : at,
               label + " has no retention for period " + quoted(p.name) + "; add '" + p.name +
                   ": <duration>' (or 'default: <duration>') under retention");
        continue;
      }
      b.retention[p.name] = r->value;
      const bool from_default = it == written.end();
      if (grace_ok && r->value <= b.grace && !(from_default && fallback_reported)) {
        fallback_reported = fallback_reported || from_default;
        report(r->pos, "retention." + (from_default ? std::string("default") : p.name) + " (" +
                           format_duration(r->value) + ") must be longer than archive.grace (" +
                           format_duration(b.grace) +
                           "): a hot key must not expire before its period is archived");
      }
    }
  }

  // The 53-bit budget, period by period.
  if (points_ok && b.zone != nullptr) {
    for (std::size_t i = 0; i < b.periods.size(); ++i) {
      const PeriodSpec& p = b.periods[i];
      // A schedule that never fires ("0 0 31 2 *") would have no periods at all.
      if (p.cron && !p.cron->next_firing_after(*b.zone, from_epoch_ms(kAlltimeStartMs))) {
        report(period_positions[i], label + " period " + quoted(p.name) + ": cron " +
                                        quoted(p.cron->text()) + " never fires");
        continue;
      }
      try {
        if (const auto problem = budget_problem(b.layout_for(p))) {
          report(*max_entry, label + " period " + quoted(p.name) + ": " + *problem);
        }
      } catch (const Error& error) {
        report(period_positions[i],
               label + " period " + quoted(p.name) + ": " + std::string(error.what()));
      }
    }
  }

  if (problem_count() != before) return std::nullopt;
  return b;
}

void Loader::parse_boards(const Entry& entry, std::vector<BoardConfig>& boards) {
  if (!entry.value.is_sequence()) {
    report(entry, "boards must be a list of board entries (lines starting with '- name:'), not " +
                      kind_of(entry.value));
    return;
  }
  if (entry.value.size() == 0) {
    report(entry, "boards is empty; define at least one board");
    return;
  }
  // An entry that an earlier one always matches first could never be used: the same
  // pattern again, or a plain name an earlier glob matches. Linear in the entries (a map
  // of the patterns seen) times the globs.
  std::unordered_map<std::string, std::size_t> seen;  // pattern -> its first entry
  std::vector<std::size_t> globs;                     // entries whose pattern is a glob
  for (const auto node : entry.value.items()) {
    auto board = parse_board(node);
    if (!board) continue;
    const Pos here = pos_of(node);
    if (const auto it = seen.find(board->pattern); it != seen.end()) {
      report(here, "board " + quoted(board->pattern) + " is defined twice (first at " +
                       boards[it->second].where + "); only the first entry would be used");
    } else if (!is_glob(board->pattern)) {
      for (const std::size_t j : globs) {
        const BoardConfig& earlier = boards[j];
        if (board_matches(earlier.pattern, board->pattern)) {
          report(here, "board " + quoted(board->pattern) + " is never used: the earlier entry " +
                           quoted(earlier.pattern) + " at " + earlier.where +
                           " matches it first; move this entry above it");
          break;
        }
      }
    }
    seen.emplace(board->pattern, boards.size());
    if (is_glob(board->pattern)) globs.push_back(boards.size());
    boards.push_back(std::move(*board));
  }
}

void Loader::parse_serve(const Entry& entry, ServeConfig& serve) {
  const auto map = read_map(entry, "serve");
  if (!map) return;
  const Fields f = fields(*map, "in the serve section", kServeKeys);
  if (const auto e = f.get("listen")) {
    if (const auto listen = read_string(*e, "serve.listen")) {
      const auto colon = listen->rfind(':');
      if (colon == std::string::npos || colon + 1 == listen->size() ||
          listen->find_first_not_of("0123456789", colon + 1) != std::string::npos) {
        report(*e, "serve.listen must be HOST:PORT (e.g. 127.0.0.1:8080 or 0.0.0.0:8080), not '" +
                       *listen + "'");
      } else {
        serve.listen = *listen;
      }
    }
  }
  if (const auto e = f.get("tokens_file")) {
    if (const auto file = read_string(*e, "serve.tokens_file")) {
      serve.tokens_file = *file;
      serve.where = where(e->pos());
    }
  }
  parse_serve_limits(f, serve);
  if (const auto e = f.get("cors_origins")) parse_cors_origins(*e, serve.cors_origins);
}

void Loader::parse_serve_limits(const Fields& f, ServeConfig& serve) {
  for (const auto& [key, into] :
       {std::pair<const char*, Millis*>{"header_timeout", &serve.header_timeout},
        {"body_timeout", &serve.body_timeout},
        {"idle_timeout", &serve.idle_timeout}}) {
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

Config Loader::load(const yaml::Node& root, const ConfigOverrides& overrides) {
  Config config;
  config.path = path_;
  if (!root.is_map() && !is_blank(root)) {
    report(root,
           "the config must be a map with the keys redis, postgres, ingest, serve, history and "
           "boards, "
           "not " +
               kind_of(root));
    return config;
  }
  const Fields top = fields(root, "at the top level", kTopKeys);
  if (const auto e = top.get("redis")) parse_redis(*e, config.redis, overrides);
  if (const auto e = top.get("postgres")) parse_postgres(*e, config.postgres, overrides);
  if (const auto e = top.get("ingest")) parse_ingest(*e, config.ingest, config.redis.cluster);
  if (const auto e = top.get("serve")) parse_serve(*e, config.serve);
  // On a cluster the default stream carries a hash tag (see cluster_stream_problem).
  if (config.ingest.streams.empty()) {
    config.ingest.streams = {config.redis.key_prefix +
                             (config.redis.cluster ? ":{events}" : ":events")};
  }
  if (const auto e = top.get("boards")) {
    parse_boards(*e, config.boards);
  } else {
    report(pos_of(root), "the config has no 'boards' (a list of board entries)");
  }
  if (const auto e = top.get("history")) parse_history(*e, config.boards, config.history);

  if (overrides.redis_url) add_url_secrets(*overrides.redis_url);
  if (overrides.postgres_url) add_url_secrets(*overrides.postgres_url);
  if (overrides.redis_url) {
    if (const auto problem = redis::scheme_problem(*overrides.redis_url)) {
      report_unpositioned("BOARDKEEPER_REDIS_URL " + *problem);
    } else {
      config.redis.url = *overrides.redis_url;
    }
  }
  if (overrides.postgres_url) {
    if (const auto problem = postgres_url_problem(*overrides.postgres_url)) {
      report_unpositioned("BOARDKEEPER_POSTGRES_URL " + *problem);
    } else {
      config.postgres.url = *overrides.postgres_url;
    }
  }
  return config;
}

}  // namespace

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

ConfigError::ConfigError(std::vector<std::string> problems)
    : UsageError(join(problems, "\n")), problems_(std::move(problems)) {}

std::optional<Millis> HistoryConfig::retention_for(const std::string& period) const {
  auto it = retention.find(period);
  if (it == retention.end()) it = retention.find("default");
  if (it == retention.end()) return std::nullopt;
  return it->second;
}

const PeriodSpec* BoardConfig::period(std::string_view name) const {
  for (const PeriodSpec& p : periods) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Millis BoardConfig::retention_for(const PeriodSpec& p) const {
  const auto it = retention.find(p.name);
  if (it == retention.end()) {
    throw Error("board '" + pattern + "' has no retention for period '" + p.name + "'");
  }
  return it->second;
}

ScoreLayout BoardConfig::layout_for(const PeriodSpec& p) const {
  return make_layout(min_points, max_points, order, tie, resolution, longest_period(p, *zone));
}

const BoardConfig* Config::board_for(std::string_view board_name) const {
  for (const BoardConfig& b : boards) {
    if (board_matches(b.pattern, board_name)) return &b;
  }
  return nullptr;
}

Config parse_config(std::string_view yaml_text, const std::string& path_for_messages,
                    const ConfigOverrides& overrides) {
  Loader loader(path_for_messages);
  std::vector<yaml::Document> documents;
  try {
    documents = yaml::Document::parse_all(yaml_text);
  } catch (const yaml::SyntaxError& error) {
    loader.report(pos_of(error.mark), "YAML syntax error: " + std::string(error.what()));
    throw ConfigError(loader.messages());
  }
  if (documents.size() > 1) {
    loader.report(pos_of(documents[1].root()),
                  "the config must be a single YAML document; remove the second '---'");
    throw ConfigError(loader.messages());
  }
  Config config =
      loader.load(documents.empty() ? yaml::Node() : documents.front().root(), overrides);
  auto problems = loader.messages();
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return config;
}

Config load_config(const std::string& path, const ConfigOverrides& overrides) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) {
    const int err = errno;
    throw ConfigError({path + ": cannot read the config file: " + std::strerror(err)});
  }
  std::string text;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, n);
  if (std::ferror(file.get()) != 0) {
    const int err = errno;
    throw ConfigError({path + ": cannot read the config file: " + std::strerror(err)});
  }
  return parse_config(text, path, overrides);
}

}  // namespace bk
