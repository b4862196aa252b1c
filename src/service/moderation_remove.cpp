// remove, ban, unban, bans (service/moderation.h).
#include "core/error.h"
#include "service/moderation.h"

namespace bk::service {

Removal Moderation::remove(const std::string&, const std::string&,
                           const std::optional<std::string>&, const std::optional<std::string>&) {
  throw Error("remove: not built yet");
}

BanResult Moderation::ban(const std::string&, const std::string&, const std::string&) {
  throw Error("ban: not built yet");
}

bool Moderation::unban(const std::string&, const std::string&) {
  throw Error("unban: not built yet");
}

std::vector<BanRecord> Moderation::bans(const std::string&) {
  throw Error("bans: not built yet");
}

}  // namespace bk::service
