// A Redis reply owned by C++ (copied out of hiredis' reply tree, which is freed at once).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bk::redis {

struct Reply {
  enum class Type { string, array, integer, nil, status, error };

  Type type = Type::nil;
  std::string str;  // string, status and error replies
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const { return type == Type::nil; }
  bool is_error() const { return type == Type::error; }
  // Throw ReplyError for an error reply, so callers can chain: reply.checked().elements.
  const Reply& checked() const;
  // The integer value of an integer reply or of a string holding an integer (as scores and
  // Lua results arrive); throws ReplyError otherwise.
  std::int64_t as_int() const;
  const std::string& as_string() const;
  const Reply& at(std::size_t i) const;
};

}  // namespace bk::redis
