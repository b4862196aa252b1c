// The config loader's internals, shared by the files that read one concern each: positions,
// the `key: value` entries of a map, the typed readers and the Loader that collects problems.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/yaml_tree.h"

namespace bk::config_detail {

// "'s'"
std::string quoted(std::string_view s);
// "a, b, c"
std::string list(const std::vector<std::string_view>& names);
// "a, b or c"
std::string alternatives(const std::vector<std::string_view>& names);

// 1-based position of a node; the start of the file when yaml-cpp has none (empty document).
struct Pos {
  int line = 1;
  int column = 1;
};

Pos pos_of(const yaml::Mark& mark);
Pos pos_of(const yaml::Node& node);

// What a node is, for messages: "the scalar 'x'", "a list", "a map" or "nothing".
std::string kind_of(const yaml::Node& node);

// No value, or a null one (`key:` alone).
bool is_blank(const yaml::Node& node);

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

// Not a postgresql:// or postgres:// URL: "is not a PostgreSQL URL (...); expected ...".
std::optional<std::string> postgres_url_problem(std::string_view url);

// Why `stream` cannot be consumed after `earlier` ones; nullopt when it can.
std::optional<std::string> stream_problem(const std::vector<std::string>& earlier,
                                          const std::string& stream);

struct Problem {
  Pos pos;
  bool positioned = true;
  std::string text;
};

// A board entry while it is read: what the later steps need from the earlier ones.
struct BoardDraft {
  BoardConfig board;
  Pos at;             // the entry's position
  std::string label;  // "board 'NAME'", or "board entry" before the name is known
  std::vector<Pos> period_positions;
  bool periods_ok = false;
  bool points_ok = true;
  bool grace_ok = true;
  std::optional<Entry> max_points;  // where a budget problem is shown
};

// A board's retention as written: per period, and `default`, each with its position.
struct WrittenRetention {
  struct Written {
    Millis value{0};
    Pos pos;
  };
  std::map<std::string, Written> per_period;
  std::optional<Written> fallback;
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
  // The steps of parse_redis.
  void parse_redis_url(const Fields& f, RedisConfig& redis, const ConfigOverrides& overrides);
  void parse_nodes(const Entry& entry, const std::string& effective_url, RedisConfig& redis);
  void check_cluster_url(const Fields& f, const Entry& section, const RedisConfig& redis);
  void parse_key_prefix(const Fields& f, RedisConfig& redis);
  void parse_tls(const Entry& entry, RedisTlsConfig& tls);
  void parse_postgres(const Entry& entry, PostgresConfig& postgres,
                      const ConfigOverrides& overrides);
  void parse_ingest(const Entry& entry, IngestConfig& ingest, bool cluster);
  void parse_serve(const Entry& entry, ServeConfig& serve);
  void parse_serve_limits(const Fields& f, ServeConfig& serve);
  void parse_serve_shares(const Fields& f, ServeConfig& serve);
  void parse_cors_origins(const Entry& entry, std::vector<std::string>& origins);
  void parse_rate_limits(const Entry& entry, RateLimitsConfig& limits);
  std::optional<RateLimit> parse_rate_limit(const Entry& entry, const std::string& key);
  void parse_history(const Entry& entry, const std::vector<BoardConfig>& boards,
                     HistoryConfig& history);
  void parse_streams(const Entry& entry, std::vector<std::string>& streams);
  void parse_boards(const Entry& entry, std::vector<BoardConfig>& boards);
  std::optional<BoardConfig> parse_board(const yaml::Node& node);
  // The steps of parse_board, in the order its problems are found.
  void parse_board_name(const Fields& f, BoardDraft& d);
  void parse_board_timezone(const Fields& f, BoardDraft& d);
  void parse_board_choices(const Fields& f, BoardConfig& b);
  void parse_points(const Fields& f, BoardDraft& d);
  std::optional<std::int64_t> read_size(const Entry& entry, std::string_view key);
  void parse_hot_sizes(const Fields& f, BoardDraft& d);
  void parse_board_windows(const Fields& f, BoardConfig& b);
  void parse_archive(const Fields& f, BoardDraft& d);
  void parse_closes(const Fields& f, BoardConfig& b);
  void parse_retention(const Fields& f, BoardDraft& d);
  std::optional<WrittenRetention> read_retention(const Entry& entry, const BoardDraft& d);
  void check_budget(const BoardDraft& d);
  // tiers (config/tiers.cpp): the rules, then the checks between them.
  void parse_tiers(const Fields& f, BoardDraft& d);
  std::optional<TierRule> parse_tier_rule(const yaml::Node& node, const BoardDraft& d);
  std::optional<TierRule> read_tier_criterion(const Fields& rule, const yaml::Node& node,
                                              const BoardDraft& d);
  void check_tier_order(const std::vector<TierRule>& rules, const std::vector<Pos>& positions,
                        const BoardDraft& d);
  // league (config/league.cpp): the divisions, the sizes, then the board's other keys.
  void parse_league(const Fields& f, BoardDraft& d);
  void parse_divisions(const Entry& entry, LeagueConfig& league);
  void parse_league_moves(const Fields& f, LeagueConfig& league);
  void check_league_board(const Fields& f, const Entry& entry, const BoardDraft& d);
  bool parse_periods(const Entry& entry, BoardConfig& board, std::vector<Pos>& positions);
  std::optional<PeriodSpec> parse_custom_period(const yaml::Node& node);
  // A named period's window (config/period_window.cpp): `period` (a fixed kind), `starts`
  // and `duration`, or a cron period's `duration`.
  void parse_period_window(const Fields& f, const yaml::Node& node, PeriodSpec& spec);
  std::optional<PeriodKind> read_window_kind(const Entry& entry);
};

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

}  // namespace bk::config_detail
