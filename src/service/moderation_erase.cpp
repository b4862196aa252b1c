// erase (service/moderation.h).
#include "core/error.h"
#include "service/moderation.h"

namespace bk::service {

Erasure Moderation::erase(const std::string&, const EraseOptions&) {
  throw Error("erase: not built yet");
}

}  // namespace bk::service
