// The closes stream's commands (see closes.h): XINFO STREAM for the top, XADD with the id.
#include "hot/closes.h"

#include "redis/error.h"

namespace bk::hot {

StreamId close_entry_id(std::int64_t seq) {
  return StreamId{static_cast<std::uint64_t>(seq), 1};
}

std::optional<StreamId> stream_top(redis::Connection& redis, const std::string& stream) {
  const redis::Reply r = redis.command({"XINFO", "STREAM", stream});
  if (r.is_error()) {
    if (r.str.find("no such key") != std::string::npos) return std::nullopt;
    redis::throw_reply_error(r.str);
  }
  // RESP2: a flat list of names and values.
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    const redis::Reply& name = r.elements[i];
    if (name.type != redis::Reply::Type::string && name.type != redis::Reply::Type::status) {
      continue;
    }
    if (name.str != "last-generated-id") continue;
    if (const auto id = StreamId::parse(r.elements[i + 1].as_string())) return id;
    break;
  }
  throw redis::ReplyError("XINFO STREAM " + stream + " answered without a last-generated-id");
}

CloseAdded add_close_entry(redis::Connection& redis, const std::string& stream, std::int64_t seq,
                           const EntryFields& fields) {
  redis::Args args{"XADD", stream, close_entry_id(seq).text()};
  args.reserve(3 + 2 * fields.size());
  for (const auto& [field, value] : fields) {
    args.push_back(field);
    args.push_back(value);
  }
  const redis::Reply r = redis.command(args);
  if (!r.is_error()) return CloseAdded::added;
  // "ERR The ID specified in XADD is equal or smaller than the target stream top item"
  if (r.str.find("equal or smaller") != std::string::npos) return CloseAdded::already;
  redis::throw_reply_error(r.str);
}

}  // namespace bk::hot
