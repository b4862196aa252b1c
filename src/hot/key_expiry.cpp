// Keys' expiry times (see key_expiry.h).
#include "hot/key_expiry.h"

namespace bk::hot {

std::vector<std::string> keys_without_expiry(redis::Connection& conn,
                                             const std::vector<std::string>& keys) {
  std::vector<redis::Args> ask;
  ask.reserve(keys.size());
  for (const auto& k : keys) ask.push_back({"PTTL", k});
  const auto ttls = conn.pipeline(ask);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (ttls[i].as_int() == -1) out.push_back(keys[i]);  // exists without a TTL (-2: no key)
  }
  return out;
}

void expire_keys_at(redis::Connection& conn, const std::vector<std::string>& keys, Instant at) {
  std::vector<redis::Args> fix;
  fix.reserve(keys.size());
  for (const auto& k : keys) fix.push_back({"PEXPIREAT", k, std::to_string(to_epoch_ms(at))});
  for (const auto& r : conn.pipeline(fix)) r.checked();
}

}  // namespace bk::hot
