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

namespace {

// The value of `field` in text of "field:value" lines ("" when absent).
std::string_view info_field(std::string_view info, std::string_view field) {
  for (std::size_t at = 0; at < info.size();) {
    std::size_t end = info.find('\n', at);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > field.size() && line.substr(0, field.size()) == field &&
        line[field.size()] == ':') {
      return line.substr(field.size() + 1);
    }
    at = end + 1;
  }
  return {};
}

// The value of `name` in "a=1,b=2" ("" when absent).
std::string_view list_field(std::string_view list, std::string_view name) {
  for (std::size_t at = 0; at < list.size();) {
    std::size_t end = list.find(',', at);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view item = list.substr(at, end - at);
    if (item.size() > name.size() && item.substr(0, name.size()) == name &&
        item[name.size()] == '=') {
      return item.substr(name.size() + 1);
    }
    at = end + 1;
  }
  return {};
}

}  // namespace

Replication parse_replication(std::string_view info, std::size_t replicas) {
  Replication r;
  r.replid = std::string(info_field(info, "master_replid"));
  const auto offset = decimal(info_field(info, "master_repl_offset"));
  if (info_field(info, "role") != "master" || !offset) return r;
  r.offset = static_cast<std::int64_t>(*offset);
  std::int64_t held = r.offset;
  std::size_t listed = 0, in_step = 0;
  for (;; ++listed) {
    const std::string_view line = info_field(info, "slave" + std::to_string(listed));
    if (line.empty()) break;
    const auto at = decimal(list_field(line, "offset"));
    if (list_field(line, "state") != "online" || !at) continue;
    ++in_step;
    held = std::min(held, static_cast<std::int64_t>(*at));
  }
  if (in_step >= std::max(replicas, listed)) r.held_by_all = held;
  return r;
}

std::size_t replicas_of_myself(std::string_view cluster_nodes) {
  struct Line {
    std::string_view id, flags, master;
  };
  std::vector<Line> lines;
  std::string_view myself;
  for (std::size_t at = 0; at < cluster_nodes.size();) {
    std::size_t end = cluster_nodes.find('\n', at);
    if (end == std::string_view::npos) end = cluster_nodes.size();
    const std::string_view text = cluster_nodes.substr(at, end - at);
    at = end + 1;
    std::string_view f[4];
    std::size_t k = 0, from = 0;
    while (k < 4 && from < text.size()) {
      std::size_t to = text.find(' ', from);
      if (to == std::string_view::npos) to = text.size();
      f[k++] = text.substr(from, to - from);
      from = to + 1;
    }
    if (k < 4) continue;
    const Line l{f[0], f[2], f[3]};
    const auto has = [&](std::string_view flag) {
      for (std::size_t p = 0; p < l.flags.size();) {
        std::size_t q = l.flags.find(',', p);
        if (q == std::string_view::npos) q = l.flags.size();
        if (l.flags.substr(p, q - p) == flag) return true;
        p = q + 1;
      }
      return false;
    };
    if (has("myself")) myself = l.id;
    if (!has("fail")) lines.push_back(l);
  }
  return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const Line& l) {
    return !myself.empty() && l.master == myself;
  }));
}

Replication replication_of(redis::Connection& conn, const std::string& stream) {
  std::size_t replicas = 0;
  if (conn.options().cluster) {
    replicas =
        replicas_of_myself(conn.node_command(stream, {"CLUSTER", "NODES"}).checked().as_string());
  }
  return parse_replication(conn.node_command(stream, {"INFO", "replication"}).checked().as_string(),
                           replicas);
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
