// Text and JSON rendering shared by the read commands.
#include "cli/output.h"

#include <date/tz.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace bk::cli {
namespace {
constexpr std::size_t kTimeWidth = 24;  // 2026-11-22T14:03:00.000Z

bool lacks(const service::Standing& r, const char* field) {
  return std::find(r.unavailable.begin(), r.unavailable.end(), field) != r.unavailable.end();
}

// The name column: the name, "(unavailable)" when it could not be fetched, or nothing.
std::optional<std::string> name_cell(const service::Standing& r) {
  if (r.name) return printable(*r.name);
  if (lacks(r, "name")) return "(unavailable)";
  return std::nullopt;
}

// The tier column (boards with tiers): the tier, "(unavailable)", or "-" in none.
std::string tier_cell(const service::Standing& r) {
  if (r.tier) return *r.tier;
  return lacks(r, "tier") ? "(unavailable)" : "-";
}
}  // namespace

std::string printable(std::string_view s) {
  return escape_control(s, false);
}

std::string format_local(Instant t, const date::time_zone& zone) {
  return date::format("%FT%T%Ez",
                      date::zoned_time<std::chrono::seconds>(
                          &zone, std::chrono::time_point_cast<std::chrono::seconds>(t)));
}

void StandingsPrinter::json_lines(const std::vector<service::Standing>& rows) {
  for (const auto& r : rows) {
    JsonLine line;
    line.str("board", ref_.board)
        .str("period", ref_.spec->name)
        .str("period_id", ref_.period.id)
        .time("period_start", ref_.period.start)
        .time("period_end", ref_.period.end)
        .num("rank", r.rank)
        .str("member", r.member)
        .num("points", r.points)
        .time("achieved_at", r.achieved_at);
    if (tiered()) line.raw("tier", r.tier ? json_string(*r.tier) : "null");
    out_ << line.profile(r.name, r.metadata, r.unavailable).done() << "\n";
  }
}

void StandingsPrinter::page(const std::vector<service::Standing>& rows) {
  if (json_) {
    json_lines(rows);
    return;
  }
  if (rows.empty()) return;
  if (!started_) {
    started_ = true;
    header();
    for (const auto& r : rows) width_ = std::max(width_, printable(r.member).size());
    for (const auto& t : ref_.config->tiers) tier_width_ = std::max(tier_width_, t.name.size());
    for (const auto& r : rows) tier_width_ = std::max(tier_width_, tier_cell(r).size());
    out_ << std::right << std::setw(6) << "rank"
         << "  " << std::left << std::setw(static_cast<int>(width_)) << "member"
         << "  " << std::right << std::setw(12) << "points";
    if (tiered()) out_ << "  " << std::left << std::setw(static_cast<int>(tier_width_)) << "tier";
    out_ << "  achieved_at";
    if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return name_cell(r); })) {
      out_ << std::string(kTimeWidth - 11, ' ') << "  name";
    }
    out_ << "\n";
  }
  for (const auto& r : rows) {
    out_ << std::right << std::setw(6) << r.rank << "  " << std::left
         << std::setw(static_cast<int>(width_)) << printable(r.member) << "  " << std::right
         << std::setw(12) << r.points << "  ";
    if (tiered()) {
      out_ << std::left << std::setw(static_cast<int>(tier_width_)) << tier_cell(r) << "  ";
    }
    out_ << std::setw(0);
    const std::string at = r.achieved_at ? format_rfc3339(*r.achieved_at) : std::string("-");
    out_ << at;
    if (const auto name = name_cell(r)) {
      out_ << std::string(at.size() < kTimeWidth ? kTimeWidth - at.size() : 0, ' ') << "  "
           << *name;
    }
    out_ << "\n";
  }
}

void StandingsPrinter::finish() {
  if (json_ || started_) return;
  header();
  out_ << "  (no members)\n";
}

void StandingsPrinter::header() {
  out_ << ref_.board << " " << ref_.spec->name << " " << ref_.period.id << "  ("
       << format_local(ref_.period.start, *ref_.config->zone) << " .. "
       << format_local(ref_.period.end, *ref_.config->zone) << ")\n";
}

void print_not_on(const std::string& member, const service::PeriodRef& ref) {
  std::cerr << "member '" << printable(member) << "' is not on " << ref.board << " "
            << ref.spec->name << " " << ref.period.id << "\n";
}

void print_standings(std::ostream& out, bool json, const service::PeriodRef& ref,
                     const std::vector<service::Standing>& rows) {
  StandingsPrinter printer(out, json, ref);
  printer.page(rows);
  printer.finish();
}

}  // namespace bk::cli
