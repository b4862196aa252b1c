// serve's bearer tokens, read when serve starts and registered as secrets (core/redact.h)
// before anything can print them: read tokens (the /v1 reads), admin tokens (the moderation
// routes of src/api/admin.h) and write tokens (the score writes, src/api/write.h). Every source
// that is set must name a token (else UsageError: exit 2): a typo never serves without
// authentication.
#pragma once
#include <string>
#include <vector>

#include "api/api.h"
#include "config/config.h"

namespace bk::http {

// BOARDKEEPER_SERVE_TOKENS (comma-separated) and serve.tokens_file (one a line, blank lines
// and # comments skipped). Neither set: none, and /v1 is open to anyone who can connect
// (logged as a warning).
std::vector<std::string> load_read_tokens(const ServeConfig& config);

// BOARDKEEPER_SERVE_ADMIN_TOKENS and serve.admin_tokens_file, read the same way. Neither set:
// none, and the admin routes answer 403 to everyone. A token that is also one of
// `read_tokens` is a UsageError (a read token must never be an admin token by mistake); the
// message never shows a token.
std::vector<std::string> load_admin_tokens(const ServeConfig& config,
                                           const std::vector<std::string>& read_tokens);

// BOARDKEEPER_SERVE_WRITE_TOKENS (comma-separated, each for every board) and
// serve.write_tokens_file (one a line: `TOKEN` for every board, or `TOKEN boards=GLOB,...`).
// Neither set: none, and writes are off. A token that is also a read or admin token, a line
// whose scope is not `boards=` with valid globs, is a UsageError naming the file's line,
// never the token.
std::vector<api::WriteToken> load_write_tokens(const ServeConfig& config,
                                               const std::vector<std::string>& read_tokens,
                                               const std::vector<std::string>& admin_tokens);

}  // namespace bk::http
