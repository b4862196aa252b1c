// Page cursors of the HTTP read API: opaque to clients, checked when they come back. A
// cursor names its board period and the last row of the page it followed (member, points,
// achieved_at, position); the next page starts after that row. It carries no rank: ranks
// are always computed when a page is read. A cursor that was altered, truncated or made up
// fails the check (a checksum, not a secret: a forged cursor could only start a page at
// another place of a board its bearer may read anyway).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "service/reads.h"

namespace bk::api {

std::string encode_cursor(const service::PeriodRef& ref, const service::PageMark& mark);
// The mark, or nullopt when `cursor` is not one this period's pages handed out.
std::optional<service::PageMark> decode_cursor(const service::PeriodRef& ref,
                                               std::string_view cursor);

// RFC 4648 base64url without padding.
std::string base64url(std::string_view bytes);
std::optional<std::string> unbase64url(std::string_view text);

}  // namespace bk::api
