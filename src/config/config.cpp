// YAML -> typed, validated Config. The loader collects every problem it can find, each
// with the file, line and column of the node at fault, before refusing the file.
#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>

#include "config/loader.h"
#include "core/redact.h"
#include "core/validate.h"
#include "redis/url.h"

namespace bk {
namespace config_detail {
namespace {

const std::vector<std::string_view> kTopKeys{"redis", "postgres", "ingest",
                                             "serve", "history",  "boards"};

}  // namespace

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
  if (overrides.postgres_read_url) add_url_secrets(*overrides.postgres_read_url);
  if (overrides.redis_url) {
    if (const auto problem = redis::scheme_problem(*overrides.redis_url)) {
      report_unpositioned("BOARDKEEPER_REDIS_URL " + *problem);
    } else {
      config.redis.url = *overrides.redis_url;
    }
  }
  for (const auto& [env, value, into] :
       {std::tuple{"BOARDKEEPER_POSTGRES_URL", &overrides.postgres_url, &config.postgres.url},
        {"BOARDKEEPER_POSTGRES_READ_URL", &overrides.postgres_read_url,
         &config.postgres.read_url}}) {
    if (!*value) continue;
    if (const auto problem = postgres_url_problem(**value)) {
      report_unpositioned(std::string(env) + " " + *problem);
    } else {
      *into = **value;
    }
  }
  return config;
}

}  // namespace config_detail

namespace {

using config_detail::Loader;
using config_detail::pos_of;

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> problems)
    : UsageError(join(problems, "\n")), problems_(std::move(problems)) {}

std::int64_t ServeConfig::body_share_mb() const {
  return bodies_in_flight_per_token_mb.value_or(std::max<std::int64_t>(1, bodies_in_flight_mb / 4));
}

std::int64_t ServeConfig::request_share() const {
  return requests_in_progress_per_token.value_or(std::max<std::int64_t>(1, max_connections / 4));
}

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
