// serve's admin tokens (cli/admin_tokens.h).
#include "cli/admin_tokens.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "core/redact.h"

namespace bk::cli {
namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> of_list(const std::string& list) {
  std::vector<std::string> tokens;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (std::string t = trimmed(list.substr(start, comma - start)); !t.empty()) {
      add_secret(t);
      tokens.push_back(std::move(t));
    }
    start = comma + 1;
  }
  return tokens;
}

std::vector<std::string> of_file(const ServeConfig& config) {
  const std::string what =
      config.admin_where + ": serve.admin_tokens_file '" + config.admin_tokens_file + "'";
  std::ifstream in(config.admin_tokens_file);
  if (!in) throw UsageError(what + " cannot be read");
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    line = trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    add_secret(line);
    tokens.push_back(line);
  }
  if (tokens.empty()) {
    throw UsageError(what + " names no token (one a line; blank lines and # comments are skipped)");
  }
  return tokens;
}

}  // namespace

std::vector<std::string> load_admin_tokens(const ServeConfig& config,
                                           const std::vector<std::string>& read_tokens) {
  std::vector<std::string> tokens;
  if (const char* env = std::getenv("BOARDKEEPER_SERVE_ADMIN_TOKENS"); env != nullptr) {
    tokens = of_list(env);
    if (tokens.empty()) {
      throw UsageError(
          "BOARDKEEPER_SERVE_ADMIN_TOKENS is set but names no token (comma-separated tokens); "
          "unset it to keep the admin routes closed");
    }
  }
  if (!config.admin_tokens_file.empty()) {
    const std::vector<std::string> from_file = of_file(config);
    tokens.insert(tokens.end(), from_file.begin(), from_file.end());
  }
  for (const std::string& t : tokens) {
    if (std::find(read_tokens.begin(), read_tokens.end(), t) != read_tokens.end()) {
      throw UsageError(
          "a token is both a read token (BOARDKEEPER_SERVE_TOKENS, serve.tokens_file) and an "
          "admin token (BOARDKEEPER_SERVE_ADMIN_TOKENS, serve.admin_tokens_file): admin tokens "
          "must be distinct");
    }
  }
  if (tokens.empty()) {
    spdlog::info(
        "serve: no admin token (serve.admin_tokens_file, BOARDKEEPER_SERVE_ADMIN_TOKENS): the "
        "admin routes answer 403");
  }
  return tokens;
}

}  // namespace bk::cli
