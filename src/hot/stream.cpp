// Stream bounds: ids parsed exactly (std::from_chars), the two scripts' replies typed.
#include "hot/stream.h"

#include <algorithm>

#include <charconv>

#include "embedded/hot_lua.h"
#include "redis/error.h"

namespace bk::hot {
namespace {

std::optional<std::uint64_t> decimal(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<StreamId> StreamId::parse(std::string_view text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto ms = decimal(text.substr(0, dash));
  const auto seq = decimal(text.substr(dash + 1));
  if (!ms || !seq) return std::nullopt;
  return StreamId{*ms, *seq};
}

std::string StreamId::text() const {
  return std::to_string(ms) + "-" + std::to_string(seq);
}

StreamKeeper::StreamKeeper()
    : bounds_(embedded::hot_lua::stream_bounds_lua),
      leave_(embedded::hot_lua::stream_leave_lua),
      dead_letter_(embedded::hot_lua::stream_dead_letter_lua) {}

std::vector<std::string> StreamKeeper::dead_letter(redis::Connection& conn, const GroupRef& ref,
                                                   const std::string& dead,
                                                   std::int64_t dead_maxlen,
                                                   const std::vector<DeadLetter>& letters) {
  std::vector<std::string> out;
  out.reserve(letters.size());
  // As many letters a call as fit in redis::kMaxCommandArguments (EVALSHA, sha, 2, two
  // keys: 5); each letter is written and acknowledged within one call.
  constexpr std::size_t kRoom = redis::kMaxCommandArguments - 5;
  for (std::size_t from = 0; from < letters.size();) {
    redis::Args args{ref.group, std::to_string(dead_maxlen)};
    std::size_t to = from;
    while (to < letters.size()) {
      const DeadLetter& l = letters[to];
      // An entry of more fields than one call can carry keeps its first ones.
      constexpr std::size_t kMostFields = (kRoom - 2 - 3) / 2;
      const std::size_t all = l.fields != nullptr ? l.fields->size() : 0;
      const std::size_t n = std::min(all, kMostFields);
      if (to > from && args.size() + 3 + 2 * n > kRoom) break;
      args.push_back(l.id);
      args.push_back(n < all ? l.reason + " (only its first " + std::to_string(n) + " of " +
                                   std::to_string(all) + " fields kept here)"
                             : l.reason);
      args.push_back(std::to_string(2 * n));
      for (std::size_t i = 0; i < n; ++i) {
        args.push_back((*l.fields)[i].first);
        args.push_back((*l.fields)[i].second);
      }
      ++to;
    }
    const redis::Reply r = dead_letter_.eval(conn, {ref.stream, dead}, args).checked();
    if (r.elements.size() != to - from) {
      throw redis::ReplyError("dead-letter script answered " + std::to_string(r.elements.size()) +
                              " letters for " + std::to_string(to - from));
    }
    for (const redis::Reply& e : r.elements) out.push_back(e.as_string());
    from = to;
  }
  return out;
}

StreamBounds StreamKeeper::bounds(redis::Connection& conn, const GroupRef& ref, Trim trim) {
  const redis::Reply r =
      bounds_.eval(conn, {ref.stream}, {ref.group, trim == Trim::acknowledged ? "1" : "0"});
  r.checked();
  StreamBounds out;
  if (!r.at(0).is_nil()) {
    out.acknowledged_below = StreamId::parse(r.at(0).as_string());
    if (!out.acknowledged_below) {
      throw redis::ReplyError("stream bounds of " + ref.stream + ": '" + r.at(0).as_string() +
                              "' is not a stream entry id");
    }
  }
  if (!r.at(1).is_nil()) out.lag = r.at(1).as_int();
  out.pending = r.at(2).as_int();
  out.length = r.at(3).as_int();
  out.trimmed = r.at(4).as_int();
  return out;
}

Departure StreamKeeper::leave(redis::Connection& conn, const GroupRef& ref,
                              const std::string& consumer) {
  const std::int64_t r = leave_.eval(conn, {ref.stream}, {ref.group, consumer}).checked().as_int();
  if (r == 1) return Departure::left;
  if (r == 0) return Departure::pending;
  return Departure::no_group;
}

}  // namespace bk::hot
