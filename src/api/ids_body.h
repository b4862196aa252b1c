// The JSON body of a members request, {"ids": ["member", ...]}, read as a stream of events
// (nlohmann's SAX interface): no document is built, nothing recurses, and a body nested
// deeper than kMaxJsonDepth is refused as soon as that depth is reached.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk::api {

inline constexpr int kMaxJsonDepth = 8;  // nested objects and arrays, the body's own included

struct IdsBody {
  std::vector<std::string> ids;        // as given (duplicates kept), at most max_ids
  std::optional<std::string> problem;  // why the body is refused: short, no client JSON in it
};

// The ids of `body`: an object whose "ids" is an array of strings, each a valid member id
// (other keys are read and ignored); more than `max_ids` of them is a problem.
IdsBody ids_from_body(std::string_view body, std::size_t max_ids);

}  // namespace bk::api
