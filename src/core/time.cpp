// RFC 3339 parsing and formatting, strict about the shape so typos are refused.
#include "core/time.h"

#include <date/date.h>

#include <cctype>
#include <charconv>

namespace bk {
namespace {

bool read_int(std::string_view s, std::size_t pos, std::size_t len, int& out) {
  if (pos + len > s.size()) return false;
  for (std::size_t i = pos; i < pos + len; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  auto res = std::from_chars(s.data() + pos, s.data() + pos + len, out);
  return res.ec == std::errc{};
}

}  // namespace

std::optional<Instant> parse_rfc3339(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (s.size() < 20 || !read_int(s, 0, 4, y) || s[4] != '-' || !read_int(s, 5, 2, mo) ||
      s[7] != '-' || !read_int(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !read_int(s, 11, 2, h) || s[13] != ':' || !read_int(s, 14, 2, mi) || s[16] != ':' ||
      !read_int(s, 17, 2, sec)) {
    return std::nullopt;
  }
  const date::year_month_day ymd{date::year{y}, date::month{static_cast<unsigned>(mo)},
                                 date::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  std::size_t pos = 19;
  long long frac_ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (digits < 3) frac_ms = frac_ms * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (std::size_t i = digits; i < 3; ++i) frac_ms *= 10;
  }
  if (pos >= s.size()) return std::nullopt;
  long long offset_min = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh = 0, om = 0;
    if (!read_int(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !read_int(s, pos + 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_min = (static_cast<long long>(oh) * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const auto local = date::sys_days{ymd} + std::chrono::hours{h} + std::chrono::minutes{mi} +
                     std::chrono::seconds{sec} + Millis{frac_ms};
  return Instant{std::chrono::duration_cast<Millis>(local.time_since_epoch()) -
                 std::chrono::minutes{offset_min}};
}

std::string format_rfc3339(Instant t) {
  // By hand for the years 0000-9999 (spills and archives format one per row; date::format
  // goes through an ostringstream, ten times slower); date::format beyond them.
  const auto day = date::floor<date::days>(t);
  const date::year_month_day ymd{day};
  const int year = static_cast<int>(ymd.year());
  if (year < 0 || year > 9999) return date::format("%FT%TZ", t);
  const auto ms = static_cast<unsigned>((t - day).count());  // [0, 86400000)
  char out[] = "0000-00-00T00:00:00.000Z";
  const auto put = [&out](std::size_t at, unsigned value, std::size_t digits) {
    for (std::size_t i = digits; i > 0; --i, value /= 10)
      out[at + i - 1] = static_cast<char>('0' + value % 10);
  };
  put(0, static_cast<unsigned>(year), 4);
  put(5, static_cast<unsigned>(ymd.month()), 2);
  put(8, static_cast<unsigned>(ymd.day()), 2);
  put(11, ms / 3600000, 2);
  put(14, ms / 60000 % 60, 2);
  put(17, ms / 1000 % 60, 2);
  put(20, ms % 1000, 3);
  return std::string(out, sizeof out - 1);
}

Instant Clock::now() const {
  if (fixed_) return *fixed_;
  return std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now());
}

}  // namespace bk
