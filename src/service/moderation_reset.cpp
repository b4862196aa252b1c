// reset, drop (service/moderation.h).
#include "core/error.h"
#include "service/moderation.h"

namespace bk::service {

Reset Moderation::reset(const std::string&, const std::string&, const std::optional<std::string>&) {
  throw Error("reset: not built yet");
}

Drop Moderation::drop(const std::string&, bool) {
  throw Error("drop: not built yet");
}

}  // namespace bk::service
