// The config loader's YAML helpers: positions, node kinds, the entries of a map (unknown and
// duplicate keys reported) and the typed readers of a value (string, int, duration, map).
#include <algorithm>
#include <charconv>

#include "config/loader.h"
#include "core/duration.h"
#include "core/text.h"

namespace bk::config_detail {
namespace {

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

}  // namespace

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

}  // namespace bk::config_detail
