// Text and JSON rendering shared by the read commands.
#include "cli/output.h"

#include <date/tz.h>

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace bk::cli {
namespace {

std::string escape(std::string_view s, bool json) {
  std::string out;
  out.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"':
        out += json ? "\\\"" : "\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, json ? "\\u%04x" : "\\x%02x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace

std::string json_string(std::string_view s) {
  return "\"" + escape(s, true) + "\"";
}
std::string printable(std::string_view s) {
  return escape(s, false);
}

void JsonLine::key(std::string_view k) {
  if (!body_.empty()) body_ += ",";
  body_ += json_string(k) + ":";
}

JsonLine& JsonLine::str(std::string_view k, std::string_view value) {
  key(k);
  body_ += json_string(value);
  return *this;
}

JsonLine& JsonLine::num(std::string_view k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::time(std::string_view k, const std::optional<Instant>& value) {
  key(k);
  body_ += value ? json_string(format_rfc3339(*value)) : "null";
  return *this;
}

JsonLine& JsonLine::raw(std::string_view k, std::string_view json) {
  key(k);
  body_ += json;
  return *this;
}

std::string format_local(Instant t, const date::time_zone& zone) {
  return date::format("%FT%T%Ez",
                      date::zoned_time<std::chrono::seconds>(
                          &zone, std::chrono::time_point_cast<std::chrono::seconds>(t)));
}

void StandingsPrinter::page(const std::vector<service::Standing>& rows) {
  if (json_) {
    for (const auto& r : rows) {
      out_ << JsonLine()
                  .str("board", ref_.board)
                  .str("period", ref_.spec->name)
                  .str("period_id", ref_.period.id)
                  .time("period_start", ref_.period.start)
                  .time("period_end", ref_.period.end)
                  .num("rank", r.rank)
                  .str("member", r.member)
                  .num("points", r.points)
                  .time("achieved_at", r.achieved_at)
                  .done()
           << "\n";
    }
    return;
  }
  if (rows.empty()) return;
  if (!started_) {
    started_ = true;
    header();
    for (const auto& r : rows) width_ = std::max(width_, printable(r.member).size());
    out_ << std::right << std::setw(6) << "rank"
         << "  " << std::left << std::setw(static_cast<int>(width_)) << "member"
         << "  " << std::right << std::setw(12) << "points"
         << "  achieved_at\n";
  }
  for (const auto& r : rows) {
    out_ << std::right << std::setw(6) << r.rank << "  " << std::left
         << std::setw(static_cast<int>(width_)) << printable(r.member) << "  " << std::right
         << std::setw(12) << r.points << "  "
         << (r.achieved_at ? format_rfc3339(*r.achieved_at) : std::string("-")) << "\n";
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

void print_standings(std::ostream& out, bool json, const service::PeriodRef& ref,
                     const std::vector<service::Standing>& rows) {
  StandingsPrinter printer(out, json, ref);
  printer.page(rows);
  printer.finish();
}

}  // namespace bk::cli
