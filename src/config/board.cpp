// The config's boards: each board entry (name, periods, points, sizes, archive, retention,
// the 53-bit budget) read as named steps, and the list of entries checked for unused ones.
#include <algorithm>
#include <memory>
#include <unordered_map>

#include "config/loader.h"
#include "core/cron.h"
#include "core/duration.h"
#include "core/validate.h"

namespace bk::config_detail {
namespace {

bool is_custom_period_name(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool is_glob(std::string_view pattern) {
  return pattern.find_first_of("*?[]") != std::string_view::npos;
}

const std::vector<std::string_view> kBoardKeys{
    "name",          "periods",         "timezone",   "order",      "tie_break",
    "update",        "time_resolution", "min_points", "max_points", "hot_keep",
    "display",       "max_clock_skew",  "archive",    "retention",  "dedupe_window",
    "closes_stream", "notice_top",      "tiers",      "league"};
const std::vector<std::string_view> kArchiveKeys{"grace"};
const std::vector<std::string_view> kCustomPeriodKeys{"name", "cron", "period", "starts",
                                                      "duration"};
constexpr std::string_view kBuiltinPeriods =
    "hourly, daily, weekly, monthly, yearly, alltime or a named period {name: NAME, cron: "
    "\"MIN HOUR DOM MON DOW\"}";

}  // namespace

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
      } else if (*name == "bans") {
        report(*e, "custom period name 'bans' is reserved (the HTTP API's /v1/boards/{b}/bans)");
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
  if (f.get("period")) {
    // a window of a fixed period: parse_period_window
  } else if (const auto e = f.get("cron")) {
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
    report(node,
           "custom period has no 'cron'; write {name: NAME, cron: \"0 18 * * 5\"}, or a window "
           "of a fixed period {name: NAME, period: weekly, starts: \"sat 00:00\", duration: 48h}");
  }
  parse_period_window(f, node, spec);
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
  BoardDraft d;
  d.at = pos_of(node);
  d.board.where = where(d.at);
  const Fields f = fields(node, "in board entry", kBoardKeys);
  parse_board_name(f, d);
  parse_board_timezone(f, d);
  if (const auto e = f.get("periods")) {
    d.periods_ok = parse_periods(*e, d.board, d.period_positions);
  } else {
    report(d.at, d.label + " has no 'periods'; list some of " + std::string(kBuiltinPeriods));
  }
  parse_board_choices(f, d.board);
  parse_points(f, d);
  parse_tiers(f, d);
  parse_league(f, d);
  parse_hot_sizes(f, d);
  parse_board_windows(f, d.board);
  parse_archive(f, d);
  parse_closes(f, d.board);
  parse_retention(f, d);
  check_budget(d);
  if (problem_count() != before) return std::nullopt;
  return std::move(d.board);
}

// The name (an exact board name or a glob), and the label messages use from here on.
void Loader::parse_board_name(const Fields& f, BoardDraft& d) {
  if (const auto e = f.get("name")) {
    if (const auto name = read_string(*e, "name")) {
      if (const auto problem = board_pattern_problem(*name)) {
        report(*e, *problem + " (" + quoted(*name) + ")");
      } else {
        d.board.pattern = *name;
      }
    }
  } else {
    report(d.at, "board entry has no 'name' (an exact board name or a glob such as \"game:*\")");
  }
  d.label = d.board.pattern.empty() ? "board entry" : "board " + quoted(d.board.pattern);
}

void Loader::parse_board_timezone(const Fields& f, BoardDraft& d) {
  BoardConfig& b = d.board;
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
      report(d.at, "cannot load the time zone UTC: " + std::string(error.what()));
    }
  }
}

// order, tie_break, update and time_resolution: one of a few words each.
void Loader::parse_board_choices(const Fields& f, BoardConfig& b) {
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
}

// The points range: min_points (optional) <= max_points (required).
void Loader::parse_points(const Fields& f, BoardDraft& d) {
  BoardConfig& b = d.board;
  d.max_points = f.get("max_points");
  if (const auto e = f.get("min_points")) {
    if (const auto v = read_int(*e, "min_points")) {
      b.min_points = *v;
    } else {
      d.points_ok = false;
    }
  }
  if (d.max_points) {
    if (const auto v = read_int(*d.max_points, "max_points")) {
      b.max_points = *v;
    } else {
      d.points_ok = false;
    }
  } else {
    report(d.at, d.label +
                     " has no 'max_points' (required: the highest points a member may reach, "
                     "checked against the 53-bit score budget)");
    d.points_ok = false;
  }
  if (d.points_ok && b.max_points < b.min_points) {
    report(*d.max_points, "max_points (" + std::to_string(b.max_points) +
                              ") must be >= min_points (" + std::to_string(b.min_points) + ")");
    d.points_ok = false;
  }
}

// A size that must be at least 1: the value, or nullopt (reported) when it is not one.
std::optional<std::int64_t> Loader::read_size(const Entry& entry, std::string_view key) {
  const auto v = read_int(entry, key);
  if (v && *v < 1) {
    report(entry, std::string(key) + " must be at least 1, not " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

// The hot buffer: hot_keep >= display >= 1.
void Loader::parse_hot_sizes(const Fields& f, BoardDraft& d) {
  BoardConfig& b = d.board;
  const auto hot_entry = f.get("hot_keep");
  const auto display_entry = f.get("display");
  bool sizes_ok = true;
  if (hot_entry) {
    const auto v = read_size(*hot_entry, "hot_keep");
    if (v) b.hot_keep = *v;
    sizes_ok = v.has_value();
  }
  if (display_entry) {
    const auto v = read_size(*display_entry, "display");
    if (v) b.display = *v;
    sizes_ok = sizes_ok && v.has_value();
  }
  if (sizes_ok && b.hot_keep < b.display) {
    const Pos p = hot_entry ? hot_entry->pos() : display_entry ? display_entry->pos() : d.at;
    report(p, "hot_keep (" + std::to_string(b.hot_keep) + ") must be >= display (" +
                  std::to_string(b.display) + "): every member clients are shown must be hot");
  }
}

// max_clock_skew and dedupe_window.
void Loader::parse_board_windows(const Fields& f, BoardConfig& b) {
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
}

void Loader::parse_archive(const Fields& f, BoardDraft& d) {
  const auto e = f.get("archive");
  if (!e) return;
  const auto map = read_map(*e, "archive");
  if (!map) {
    d.grace_ok = false;
    return;
  }
  const Fields archive = fields(*map, "in the archive section", kArchiveKeys);
  if (const auto g = archive.get("grace")) {
    if (const auto grace = read_duration(*g, "archive.grace")) {
      d.board.grace = *grace;
    } else {
      d.grace_ok = false;
    }
  }
}

// Close notices: closes_stream (a Redis key) and notice_top in [1, kMaxNoticeTop].
void Loader::parse_closes(const Fields& f, BoardConfig& b) {
  if (const auto e = f.get("closes_stream")) {
    if (const auto stream = read_string(*e, "closes_stream")) {
      if (stream->empty() || stream->find('\0') != std::string::npos) {
        report(*e,
               "closes_stream must be a Redis key name (not empty, no NUL byte); leave it "
               "out for <key_prefix>:closes");
      } else {
        b.closes_stream = *stream;
      }
    }
  }
  if (const auto e = f.get("notice_top")) {
    if (const auto v = read_int(*e, "notice_top")) {
      if (*v < 1 || *v > kMaxNoticeTop) {
        report(*e, "notice_top must be between 1 and " + std::to_string(kMaxNoticeTop) +
                       " (the standings a close notice carries inline; the rest are read "
                       "from history), not " +
                       std::to_string(*v));
      } else {
        b.notice_top = *v;
      }
    }
  }
}

// Retention: explicit per period, else `default`; every period needs one, each > grace.
// Periods that failed to parse are already reported; the others are still checked.
void Loader::parse_retention(const Fields& f, BoardDraft& d) {
  const auto retention_entry = f.get("retention");
  std::optional<WrittenRetention> written = WrittenRetention{};
  if (retention_entry) written = read_retention(*retention_entry, d);
  if (!written) return;
  BoardConfig& b = d.board;
  bool fallback_reported = false;
  for (const PeriodSpec& p : b.periods) {
    const auto it = written->per_period.find(p.name);
    const bool from_default = it == written->per_period.end();
    const auto r = from_default ? written->fallback : std::optional(it->second);
    if (!r) {
      report(retention_entry ? pos_of(retention_entry->key) : d.at,
             d.label + " has no retention for period " + quoted(p.name) + "; add '" + p.name +
                 ": <duration>' (or 'default: <duration>') under retention");
      continue;
    }
    b.retention[p.name] = r->value;
    if (d.grace_ok && r->value <= b.grace && !(from_default && fallback_reported)) {
      fallback_reported = fallback_reported || from_default;
      report(r->pos, "retention." + (from_default ? std::string("default") : p.name) + " (" +
                         format_duration(r->value) + ") must be longer than archive.grace (" +
                         format_duration(b.grace) +
                         "): a hot key must not expire before its period is archived");
    }
  }
}

// The retention map as written; nullopt when it is not a map or a duration is bad.
std::optional<WrittenRetention> Loader::read_retention(const Entry& entry, const BoardDraft& d) {
  const auto map = read_map(entry, "retention");
  if (!map) return std::nullopt;
  WrittenRetention out;
  bool ok = true;
  for (const auto& [name, value] : entries(*map, "in retention")) {
    const auto r = read_duration(value, "retention." + name);
    if (!r) {
      ok = false;
      continue;
    }
    if (name == "default") {
      out.fallback = WrittenRetention::Written{*r, value.pos()};
    } else if (d.board.period(name)) {
      out.per_period[name] = WrittenRetention::Written{*r, value.pos()};
    } else if (d.periods_ok) {
      std::vector<std::string_view> used;
      used.reserve(d.board.periods.size());
      for (const PeriodSpec& p : d.board.periods) used.push_back(p.name);
      report(value.key, "retention." + name + " names a period " + d.label +
                            " does not use (its periods: " + alternatives(used) +
                            "); remove it or add the period");
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

// The 53-bit budget, period by period.
void Loader::check_budget(const BoardDraft& d) {
  const BoardConfig& b = d.board;
  if (!d.points_ok || b.zone == nullptr) return;
  for (std::size_t i = 0; i < b.periods.size(); ++i) {
    const PeriodSpec& p = b.periods[i];
    const std::string what = d.label + " period " + quoted(p.name) + ": ";
    // A schedule that never fires ("0 0 31 2 *") would have no periods at all.
    if (p.cron && !p.cron->next_firing_after(*b.zone, from_epoch_ms(kAlltimeStartMs))) {
      report(d.period_positions[i], what + "cron " + quoted(p.cron->text()) + " never fires");
      continue;
    }
    try {
      if (const auto problem = budget_problem(b.layout_for(p))) {
        report(*d.max_points, what + *problem);
      }
    } catch (const Error& error) {
      report(d.period_positions[i], what + std::string(error.what()));
    }
  }
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

}  // namespace bk::config_detail
