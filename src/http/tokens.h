// serve's bearer tokens from their sources, read when serve starts and again on SIGHUP, and
// registered as secrets (core/redact.h) before anything can print them: read tokens (the /v1
// reads), admin tokens (the moderation routes of src/api/admin.h) and write tokens (the score
// writes, src/api/write.h). Every source that is set must name a token (else UsageError: exit
// 2 at start, the old tokens kept on a reload): a typo never serves without authentication.
#pragma once
#include <string>

#include "api/tokens.h"
#include "config/config.h"

namespace bk::http {

// Every source of every kind, checked:
// - read: BOARDKEEPER_SERVE_TOKENS (comma-separated) and serve.tokens_file (one a line, blank
//   lines and # comments skipped). Neither set: none, and /v1 is open to anyone who can
//   connect.
// - admin: BOARDKEEPER_SERVE_ADMIN_TOKENS and serve.admin_tokens_file, read the same way.
//   Neither set: none, and the admin routes answer 403 to everyone.
// - write: BOARDKEEPER_SERVE_WRITE_TOKENS (comma-separated, each for every board) and
//   serve.write_tokens_file (one a line: `TOKEN` for every board, or `TOKEN boards=GLOB,...`).
//   Neither set: none, and writes are off.
// A source that is set but names no token, an unreadable file, a token of two kinds, a write
// token listed twice, a line whose scope is not `boards=` with valid globs: a UsageError
// naming the source (the file and line, or the variable), never the token.
api::Tokens load_tokens(const ServeConfig& config);

// Logs, at start, what a kind without any source means (an open API, closed admin routes,
// writes off).
void log_unset_token_sources(const ServeConfig& config);

// "2 read, 1 admin, 3 write" (for the log).
std::string token_counts(const api::Tokens& tokens);

}  // namespace bk::http
