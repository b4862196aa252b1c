// Typed access to replies; every unexpected shape is a ReplyError naming what was found.
#include "redis/reply.h"

#include <charconv>
#include <cmath>

#include "redis/error.h"

namespace bk::redis {
namespace {

const char* type_name(Reply::Type t) {
  switch (t) {
    case Reply::Type::string:
      return "string";
    case Reply::Type::array:
      return "array";
    case Reply::Type::integer:
      return "integer";
    case Reply::Type::nil:
      return "nil";
    case Reply::Type::status:
      return "status";
    case Reply::Type::error:
      return "error";
  }
  return "?";
}

}  // namespace

const Reply& Reply::checked() const {
  if (type == Type::error) throw_reply_error(str);
  return *this;
}

std::int64_t Reply::as_int() const {
  checked();
  if (type == Type::integer) return integer;
  if (type == Type::string || type == Type::status) {
    std::int64_t v = 0;
    const auto res = std::from_chars(str.data(), str.data() + str.size(), v);
    if (res.ec == std::errc{} && res.ptr == str.data() + str.size()) return v;
    // Scores come back as doubles ("9.0071992547409e+15" never, Redis prints %.17g): an
    // exact integer in floating form is accepted, anything fractional is not.
    double d = 0;
    const auto dres = std::from_chars(str.data(), str.data() + str.size(), d);
    if (dres.ec == std::errc{} && dres.ptr == str.data() + str.size() && std::nearbyint(d) == d &&
        std::fabs(d) <= 9007199254740992.0) {
      return static_cast<std::int64_t>(d);
    }
  }
  throw ReplyError(std::string("expected an integer reply, got ") + type_name(type) + " '" + str +
                   "'");
}

const std::string& Reply::as_string() const {
  checked();
  if (type != Type::string && type != Type::status) {
    throw ReplyError(std::string("expected a string reply, got ") + type_name(type));
  }
  return str;
}

const Reply& Reply::at(std::size_t i) const {
  checked();
  if (type != Type::array || i >= elements.size()) {
    throw ReplyError(std::string("expected an array of more than ") + std::to_string(i) +
                     " elements, got " + type_name(type));
  }
  return elements[i];
}

}  // namespace bk::redis
