// What the server lets its clients hold at once (http/admission.h).
#include "http/admission.h"

#include <boost/asio/ip/address.hpp>

namespace bk::http {

// The key's own limits first: a key over its share is told so (429) whatever the others hold.
Admission::Verdict Admission::admit(const std::string& key, std::size_t body_bytes) {
  if (body_bytes > limits_.body_bytes || body_bytes > limits_.body_bytes_per_key) {
    return Verdict::too_large;
  }
  const auto it = held_.find(key);
  const Held held = it == held_.end() ? Held{} : it->second;
  if (held.requests >= limits_.requests_per_key) return Verdict::key_requests;
  if (body_bytes > limits_.body_bytes_per_key - held.body_bytes) return Verdict::key_bodies;
  if (body_bytes > limits_.body_bytes - body_bytes_) return Verdict::server_full;
  Held& h = it == held_.end() ? held_[key] : it->second;
  h.body_bytes += body_bytes;
  h.requests += 1;
  body_bytes_ += body_bytes;
  return Verdict::admitted;
}

void Admission::release(const std::string& key, std::size_t body_bytes) {
  const auto it = held_.find(key);
  if (it == held_.end()) return;
  Held& h = it->second;
  const std::size_t given = body_bytes < h.body_bytes ? body_bytes : h.body_bytes;
  h.body_bytes -= given;
  body_bytes_ -= given < body_bytes_ ? given : body_bytes_;
  if (h.requests > 0) h.requests -= 1;
  if (h.requests == 0 && h.body_bytes == 0) held_.erase(it);
}

std::size_t Admission::body_bytes_of(const std::string& key) const {
  const auto it = held_.find(key);
  return it == held_.end() ? 0 : it->second.body_bytes;
}

std::size_t Admission::requests_of(const std::string& key) const {
  const auto it = held_.find(key);
  return it == held_.end() ? 0 : it->second.requests;
}

std::string address_share(std::string_view peer) {
  namespace ip = boost::asio::ip;
  boost::system::error_code ec;
  const ip::address a = ip::make_address(std::string(peer), ec);
  if (ec) return "address " + std::string(peer);
  if (a.is_v4()) return "address " + a.to_v4().to_string();
  const ip::address_v6 v6 = a.to_v6();
  if (v6.is_v4_mapped()) return "address " + ip::make_address_v4(ip::v4_mapped, v6).to_string();
  ip::address_v6::bytes_type bytes = v6.to_bytes();
  for (std::size_t i = 8; i < bytes.size(); ++i) bytes[i] = 0;
  return "address " + ip::address_v6(bytes).to_string() + "/64";
}

bool FloodMark::ended(std::size_t held) {
  if (held > high_) high_ = held;
  if (high_ < floor_ || held > high_ / 4) return false;
  high_ = held;
  return true;
}

}  // namespace bk::http
