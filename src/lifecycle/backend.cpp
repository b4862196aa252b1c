// The classification by exception type: the redis and cold layers throw their own types.
#include "lifecycle/backend.h"

#include "cold/error.h"
#include "redis/error.h"

namespace bk::lifecycle {

Backend backend_of(const std::exception& error) {
  if (dynamic_cast<const redis::ConnectionError*>(&error) != nullptr ||
      dynamic_cast<const redis::ReplyError*>(&error) != nullptr) {
    return Backend::redis;
  }
  if (dynamic_cast<const cold::PostgresUnavailable*>(&error) != nullptr ||
      dynamic_cast<const cold::PostgresError*>(&error) != nullptr) {
    return Backend::postgres;
  }
  return Backend::none;
}

}  // namespace bk::lifecycle
