// Page cursors of the HTTP read API: opaque to clients, authenticated when they come back.
// A cursor names its board, period kind and period id and the last row of the page it
// followed (position, member, points, achieved_at); the next page starts after that row.
// It carries no rank: ranks are computed when a page is read. It is signed with HMAC-SHA256
// under the deployment's cursor key, so one that was altered, truncated or made up, or that
// another deployment, board or period handed out, is refused before anything is read.
#pragma once
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "service/reads.h"

namespace bk::api {

inline constexpr std::size_t kMinCursorKeyBytes = 32;

// The key cursors are signed with, asked of a provider when first needed and kept once it
// answered: a provider that throws (PostgreSQL down) is asked again by the next call.
// Thread-safe.
class CursorKey {
 public:
  explicit CursorKey(std::function<std::string()> provider);
  // The key. Throws what the provider throws when that is transient (UnavailableError: the
  // request is a 503); anything else, or a key shorter than kMinCursorKeyBytes, as
  // bk::Error (a 500: the deployment is broken, not the request).
  std::string get() const;

 private:
  std::function<std::string()> provider_;
  mutable std::mutex mu_;
  mutable std::optional<std::string> key_;
};

std::string encode_cursor(const service::PeriodRef& ref, const service::PageMark& mark,
                          std::string_view key);

struct DecodedCursor {
  std::optional<service::PageMark> mark;  // set when the cursor is good
  std::string problem;                    // else why not, for the client ("cursor ...")
};
// The mark of a cursor that a page of `ref` handed out under `key`.
DecodedCursor decode_cursor(const service::PeriodRef& ref, std::string_view cursor,
                            std::string_view key);

// RFC 4648 base64url without padding.
std::string base64url(std::string_view bytes);
std::optional<std::string> unbase64url(std::string_view text);

}  // namespace bk::api
