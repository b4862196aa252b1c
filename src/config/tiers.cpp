// A board's `tiers:`: each rule read as {name, one criterion} (top: N or "P%", min_points on
// desc boards, max_points on asc ones), then the rules checked against each other (names once
// each, no rule that can never match). The rules themselves are core/tiers.h.
#include <algorithm>

#include "config/loader.h"

namespace bk::config_detail {
namespace {

const std::vector<std::string_view> kTierKeys{"name", "top", "min_points", "max_points"};
constexpr std::string_view kTierExample =
    "write {name: gold, top: 10}, {name: gold, top: \"1%\"} or {name: gold, min_points: 500}";

}  // namespace

void Loader::parse_tiers(const Fields& f, BoardDraft& d) {
  const auto e = f.get("tiers");
  if (!e) return;
  if (!e->value.is_sequence()) {
    report(*e, "tiers must be a list of rules (" + std::string(kTierExample) + "), not " +
                   kind_of(e->value));
    return;
  }
  if (e->value.size() == 0) {
    report(*e, "tiers is empty; list at least one rule or remove the key");
    return;
  }
  if (e->value.size() > kMaxTierRules) {
    report(*e, "tiers lists " + std::to_string(e->value.size()) + " rules; at most " +
                   std::to_string(kMaxTierRules));
    return;
  }
  std::vector<TierRule> rules;
  std::vector<Pos> positions;
  bool ok = true;
  for (const auto item : e->value.items()) {
    auto rule = parse_tier_rule(item, d);
    if (!rule) {
      ok = false;
      continue;
    }
    const auto same = std::find_if(rules.begin(), rules.end(),
                                   [&](const TierRule& r) { return r.name == rule->name; });
    if (same != rules.end()) {
      report(item, "tier " + quoted(rule->name) + " is listed twice (first at " +
                       where(positions[static_cast<std::size_t>(same - rules.begin())]) + ")");
      ok = false;
      continue;
    }
    rules.push_back(std::move(*rule));
    positions.push_back(pos_of(item));
  }
  check_tier_order(rules, positions, d);  // among the rules that could be read
  if (ok) d.board.tiers = std::move(rules);
}

// One rule: its name and its one criterion.
std::optional<TierRule> Loader::parse_tier_rule(const yaml::Node& node, const BoardDraft& d) {
  if (!node.is_map()) {
    report(node, "a tier must be a map (" + std::string(kTierExample) + "), not " + kind_of(node));
    return std::nullopt;
  }
  const std::size_t before = problem_count();
  const Fields f = fields(node, "in a tier", kTierKeys);
  std::string name;
  if (const auto n = f.get("name")) {
    if (const auto text = read_string(*n, "the tier's name")) {
      if (const auto problem = tier_name_problem(*text)) {
        report(*n, *problem + " (" + quoted(*text) + ")");
      } else {
        name = *text;
      }
    }
  } else {
    report(node, "a tier has no 'name'; " + std::string(kTierExample));
  }
  auto rule = read_tier_criterion(f, node, d);
  if (problem_count() != before || !rule) return std::nullopt;
  rule->name = std::move(name);
  return rule;
}

// top: N (a rank, >= 1) or "P%" (a percentile in (0, 100]); min_points on a desc board,
// max_points on an asc one. Exactly one of them.
std::optional<TierRule> Loader::read_tier_criterion(const Fields& rule, const yaml::Node& node,
                                                    const BoardDraft& d) {
  std::vector<std::pair<std::string_view, Entry>> given;
  for (const std::string_view key : {"top", "min_points", "max_points"}) {
    if (const auto e = rule.get(key)) given.emplace_back(key, *e);
  }
  if (given.size() != 1) {
    report(given.empty() ? pos_of(node) : pos_of(given[1].second.key),
           given.empty() ? "a tier needs one criterion: top, min_points or max_points; " +
                               std::string(kTierExample)
                         : "a tier has one criterion, not both " + std::string(given[0].first) +
                               " and " + std::string(given[1].first) + "; make it two tiers");
    return std::nullopt;
  }
  const auto& [key, entry] = given.front();
  const bool desc = d.board.order == Order::desc;
  if (key == "top") {
    const bool percent = entry.value.is_scalar() && !entry.value.scalar().empty() &&
                         entry.value.scalar().back() == '%';
    if (percent) {
      const auto share = parse_percent(entry.value.scalar());
      if (!share) {
        report(entry, "top " + quoted(entry.value.scalar()) +
                          " is not a percentile in (0%, 100%] with at most 4 decimals (e.g. "
                          "\"1%\", \"0.5%\")");
        return std::nullopt;
      }
      return TierRule{"", TierKind::percent, *share};
    }
    const auto n = read_int(entry, "top");
    if (!n) return std::nullopt;
    if (*n < 1) {
      report(entry, "top must be at least 1 (a rank), not " + std::to_string(*n));
      return std::nullopt;
    }
    return TierRule{"", TierKind::top, *n};
  }
  if ((key == "min_points") != desc) {
    report(entry.key, std::string(key) + " does not fit " + d.label + ", ordered " +
                          (desc ? "desc (more points rank higher): write min_points"
                                : "asc (fewer points rank higher): write max_points"));
    return std::nullopt;
  }
  const auto n = read_int(entry, key);
  if (!n) return std::nullopt;
  return TierRule{"", key == "min_points" ? TierKind::min_points : TierKind::max_points, *n};
}

// Every rule must be able to match: none is covered by an earlier one of its kind, none comes
// after a rule that admits every member, none lies outside the board's points range.
void Loader::check_tier_order(const std::vector<TierRule>& rules, const std::vector<Pos>& positions,
                              const BoardDraft& d) {
  const BoardConfig& b = d.board;
  std::optional<std::size_t> everyone;  // the first rule that admits every member
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const TierRule& rule = rules[i];
    const auto at = [&](std::size_t j) { return " (at " + where(positions[j]) + ")"; };
    if (everyone) {
      report(positions[i], "tier " + quoted(rule.name) + " can never match: " +
                               *matches_everyone(rules[*everyone], b.min_points, b.max_points) +
                               at(*everyone) + " before it");
      continue;
    }
    if (d.points_ok) {
      if (const auto why = matches_no_one(rule, b.min_points, b.max_points)) {
        report(positions[i], *why);
        continue;
      }
    }
    bool shadowed = false;
    for (std::size_t j = 0; j < i && !shadowed; ++j) {
      if (const auto why = shadowed_by(rules[j], rule)) {
        report(positions[i], *why + at(j));
        shadowed = true;
      }
    }
    if (!shadowed && (d.points_ok || rule.kind == TierKind::percent) &&
        matches_everyone(rule, b.min_points, b.max_points)) {
      everyone = i;
    }
  }
}

}  // namespace bk::config_detail
