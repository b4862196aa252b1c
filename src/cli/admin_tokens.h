// serve's admin tokens (the moderation routes of src/api/admin.h): read when serve starts,
// registered as secrets (core/redact.h) before anything can print them.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace bk::cli {

// BOARDKEEPER_SERVE_ADMIN_TOKENS (comma-separated) and serve.admin_tokens_file (one a line,
// blank lines and # comments skipped). A source that is set must name a token (else
// UsageError: exit 2); neither set: none, and the admin routes answer 403 to everyone. A
// token that is also one of `read_tokens` is a UsageError (a read token must never be an
// admin token by mistake); the message never shows a token.
std::vector<std::string> load_admin_tokens(const ServeConfig& config,
                                           const std::vector<std::string>& read_tokens);

}  // namespace bk::cli
