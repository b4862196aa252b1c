// One look at the error tree.
#include "lifecycle/backend.h"

namespace bk::lifecycle {

Backend backend_of(const std::exception& error) {
  const auto* known = dynamic_cast<const Error*>(&error);
  return known != nullptr ? known->backend() : Backend::none;
}

}  // namespace bk::lifecycle
