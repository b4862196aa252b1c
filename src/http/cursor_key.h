// Where `serve` gets the key its page cursors are signed with (api::CursorKey's provider):
// BOARDKEEPER_CURSOR_KEY when set, else the deployment's key kept in PostgreSQL (and copied
// to Redis, so that cursors work while PostgreSQL is down).
#pragma once
#include <functional>
#include <string>

#include "config/config.h"

namespace bk::http {

// BOARDKEEPER_CURSOR_KEY set: that key (registered as a secret; shorter than 32 bytes is a
// UsageError now, at start). Else a provider that reads the key named "cursor" from the
// schema's serve_keys, storing 32 random bytes there first if nobody has: every replica of
// the deployment then signs with the same key, and keeping a copy under <prefix>:cursor_key.
// PostgreSQL down: the copy in Redis, else PostgreSQL's UnavailableError. It connects each
// time it is called (the API calls it until it has succeeded once).
std::function<std::string()> cursor_key_provider(const Config& config);

}  // namespace bk::http
