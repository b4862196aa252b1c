// Redis replies built by hand, for the server-free tests of hot's reply parsing.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "redis/reply.h"

namespace bk::hot::test {

inline redis::Reply str(const std::string& s) {
  redis::Reply r;
  r.type = redis::Reply::Type::string;
  r.str = s;
  return r;
}

inline redis::Reply integer(long long n) {
  redis::Reply r;
  r.type = redis::Reply::Type::integer;
  r.integer = n;
  return r;
}

inline redis::Reply array(std::vector<redis::Reply> elements) {
  redis::Reply r;
  r.type = redis::Reply::Type::array;
  r.elements = std::move(elements);
  return r;
}

inline redis::Reply nil() {
  return redis::Reply{};
}

inline redis::Reply error(const std::string& text) {
  redis::Reply r;
  r.type = redis::Reply::Type::error;
  r.str = text;
  return r;
}

}  // namespace bk::hot::test
