// Key names, built in one place.
#include "hot/keys.h"

namespace bk::hot {

BoardKeys::BoardKeys(std::string_view prefix, std::string_view board)
    : base_(std::string(prefix) + ":{" + std::string(board) + "}:") {}

std::string BoardKeys::live(std::string_view period, std::string_view period_id) const {
  return base_ + std::string(period) + ":" + std::string(period_id);
}

std::string BoardKeys::meta(std::string_view period, std::string_view period_id) const {
  return live(period, period_id) + ":meta";
}

std::string BoardKeys::stale(std::string_view period, std::string_view period_id) const {
  return live(period, period_id) + ":stale";
}

std::string BoardKeys::registry() const {
  return base_ + "periods";
}

std::string BoardKeys::synced() const {
  return base_ + "synced";
}

std::string BoardKeys::held() const {
  return base_ + "held";
}

std::string BoardKeys::names() const {
  return base_ + "names";
}

std::string BoardKeys::metadata() const {
  return base_ + "metadata";
}

std::string BoardKeys::seats(std::string_view period, std::string_view period_id) const {
  return live(period, period_id) + ":seats";
}

std::string BoardKeys::waiting(std::string_view period, std::string_view period_id) const {
  return live(period, period_id) + ":waiting";
}

std::string BoardKeys::divisions() const {
  return base_ + "divisions";
}

std::string BoardKeys::bans() const {
  return base_ + "bans";
}

std::string BoardKeys::busy() const {
  return base_ + "busy";
}

std::string BoardKeys::ids(std::int64_t bucket) const {
  return base_ + "ids:" + std::to_string(bucket);
}

std::string BoardKeys::fingerprints(std::int64_t bucket) const {
  return base_ + "keys:" + std::to_string(bucket);
}

std::string BoardKeys::inflight(std::string_view stream) const {
  return base_ + "inflight:" + std::string(stream);
}

std::string boards_key(std::string_view prefix) {
  return std::string(prefix) + ":boards";
}

std::string closes_key(std::string_view prefix) {
  return std::string(prefix) + ":closes";
}

std::string deployment_key(std::string_view prefix) {
  return std::string(prefix) + ":deployment";
}

std::string cursor_key_copy_key(std::string_view prefix) {
  return std::string(prefix) + ":cursor_key";
}

std::string registry_member(std::string_view period, std::string_view period_id) {
  return std::string(period) + ":" + std::string(period_id);
}

}  // namespace bk::hot
