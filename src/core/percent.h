// Percent-decoding (RFC 3986) of the parts of a URL, the one decoder every URL parser uses.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace bk {

// `text` with each %XX replaced by the byte it encodes. Nothing when a '%' is not followed by
// two hex digits ("%4g", "%zz", a lone "%"): such a URL is malformed, not "almost right".
std::optional<std::string> percent_decode(std::string_view text);

}  // namespace bk
