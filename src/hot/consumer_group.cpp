// Consumer-group commands and their typed replies (see consumer_group.h).
#include "hot/consumer_group.h"

#include "redis/error.h"

namespace bk::hot {
namespace {

// An error reply of this kind ("NOGROUP ...", "BUSYGROUP ...").
bool error_of_kind(const redis::Reply& reply, std::string_view kind) {
  return reply.is_error() && reply.str.compare(0, kind.size(), kind) == 0;
}

// The entries of a list [[id, [field, value...] or nil]...]; malformed items are skipped.
std::vector<StreamEntry> entries_of(redis::Reply&& list) {
  std::vector<StreamEntry> out;
  out.reserve(list.elements.size());
  for (redis::Reply& e : list.elements) {
    if (e.type != redis::Reply::Type::array || e.elements.size() < 2) continue;
    e.at(0).as_string();  // checks the type
    StreamEntry entry{std::move(e.elements[0].str), {}, e.elements[1].is_nil()};
    redis::Reply& f = e.elements[1];
    entry.fields.reserve(f.elements.size() / 2);
    for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
      f.at(i).as_string();
      f.at(i + 1).as_string();
      entry.fields.emplace_back(std::move(f.elements[i].str), std::move(f.elements[i + 1].str));
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

redis::Args read_group(const GroupRead& read) {
  redis::Args args{"XREADGROUP",  "GROUP", read.group,
                   read.consumer, "COUNT", std::to_string(read.count)};
  if (read.block) {
    args.push_back("BLOCK");
    args.push_back(std::to_string(read.block->count()));
  }
  args.push_back("STREAMS");
  for (const auto& s : read.streams) args.push_back(s.first);
  for (const auto& s : read.streams) args.push_back(s.second);
  return args;
}

std::vector<StreamEntries> parse_group_read(redis::Reply&& reply) {
  reply.checked();
  std::vector<StreamEntries> out;
  for (redis::Reply& s : reply.elements) {
    StreamEntries read{s.at(0).as_string(), {}};
    s.at(1);  // checks there is one
    read.entries = entries_of(std::move(s.elements[1]));
    out.push_back(std::move(read));
  }
  return out;
}

redis::Args take_over(const GroupRef& ref, const TakeOver& take) {
  return {"XAUTOCLAIM",
          ref.stream,
          ref.group,
          take.consumer,
          std::to_string(take.min_idle.count()),
          take.cursor,
          "COUNT",
          std::to_string(take.count)};
}

TakenOver parse_take_over(redis::Reply&& reply) {
  reply.checked();
  TakenOver out;
  out.cursor = reply.at(0).as_string();
  reply.at(1);  // checks there is one
  out.entries = entries_of(std::move(reply.elements[1]));
  return out;
}

redis::Args claim_ids(const GroupRef& ref, const std::string& consumer, Millis min_idle,
                      const std::vector<std::string>& ids) {
  redis::Args args{"XCLAIM", ref.stream, ref.group, consumer, std::to_string(min_idle.count())};
  args.insert(args.end(), ids.begin(), ids.end());
  args.push_back("JUSTID");
  return args;
}

std::vector<std::string> parse_claimed_ids(const redis::Reply& reply) {
  std::vector<std::string> ids;
  ids.reserve(reply.checked().elements.size());
  for (const redis::Reply& id : reply.elements) ids.push_back(id.as_string());
  return ids;
}

redis::Args pending_summary(const GroupRef& ref) {
  return {"XPENDING", ref.stream, ref.group};
}

std::int64_t parse_pending_count(const redis::Reply& reply) {
  return reply.checked().at(0).as_int();
}

std::optional<redis::Args> acknowledge(const GroupRef& ref, const std::vector<std::string>& ids) {
  if (ids.empty()) return std::nullopt;
  redis::Args args{"XACK", ref.stream, ref.group};
  args.insert(args.end(), ids.begin(), ids.end());
  return args;
}

bool is_no_group(const redis::Reply& reply) {
  return error_of_kind(reply, "NOGROUP");
}

GroupCreation create_group(redis::Connection& conn, const GroupRef& ref) {
  const redis::Reply created =
      conn.command({"XGROUP", "CREATE", ref.stream, ref.group, "0", "MKSTREAM"});
  if (error_of_kind(created, "BUSYGROUP")) return GroupCreation::existed;
  created.checked();
  return GroupCreation::created;
}

}  // namespace bk::hot
