// serve's bearer tokens (http/tokens.h).
#include "http/tokens.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "core/redact.h"
#include "core/validate.h"

namespace bk::http {
namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// One kind of token's two sources: an environment variable and a file of the config.
struct Sources {
  const char* env;        // comma-separated tokens
  const char* unset_env;  // what unsetting the variable would do
  std::string file;       // one a line
  std::string file_key;   // serve.tokens_file...
  std::string where;      // the config file's line of that key
};

void add(std::vector<std::string>& tokens, std::string t) {
  add_secret(t);  // never printed, whatever happens
  tokens.push_back(std::move(t));
}

std::vector<std::string> of_list(const std::string& list) {
  std::vector<std::string> tokens;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (std::string t = trimmed(list.substr(start, comma - start)); !t.empty())
      add(tokens, std::move(t));
    start = comma + 1;
  }
  return tokens;
}

// The file's tokens, each line whole (trimmed); `lines[i]`: token i's line number.
std::vector<std::string> of_file(const Sources& s, std::vector<int>* lines = nullptr) {
  const std::string what = s.where + ": " + s.file_key + " '" + s.file + "'";
  std::ifstream in(s.file);
  if (!in) throw UsageError(what + " cannot be read");
  std::vector<std::string> tokens;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    line = trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    add_secret(line.substr(0, line.find_first_of(" \t")));  // a write token's, before its scope
    add(tokens, std::move(line));
    if (lines != nullptr) lines->push_back(n);
  }
  if (tokens.empty()) {
    throw UsageError(what + " names no token (one a line; blank lines and # comments are skipped)");
  }
  return tokens;
}

// Both sources' tokens; `configured` says whether either was set; `file_lines` (when given):
// the line of each token from the file, the variable's first.
std::vector<std::string> load(const Sources& s, bool& configured,
                              std::vector<int>* file_lines = nullptr) {
  std::vector<std::string> tokens;
  const char* env = std::getenv(s.env);
  if (env != nullptr) {
    tokens = of_list(env);
    if (file_lines != nullptr) file_lines->assign(tokens.size(), 0);
    if (tokens.empty()) {
      throw UsageError(std::string(s.env) + " is set but names no token (comma-separated " +
                       "tokens); unset it to " + s.unset_env);
    }
  }
  if (!s.file.empty()) {
    const std::vector<std::string> from_file = of_file(s, file_lines);
    tokens.insert(tokens.end(), from_file.begin(), from_file.end());
  }
  configured = env != nullptr || !s.file.empty();
  return tokens;
}

void check_distinct(const std::string& token, const std::vector<std::string>& others,
                    const char* kind, const char* sources) {
  if (std::find(others.begin(), others.end(), token) != others.end()) {
    throw UsageError(std::string("a token is both a ") + kind + " token (" + sources +
                     ") and another kind's: each token is of one kind");
  }
}

// `TOKEN` or `TOKEN boards=GLOB,...` (a line of the write tokens file).
api::WriteToken write_token(const std::string& entry, const std::string& where) {
  const std::size_t space = entry.find_first_of(" \t");
  api::WriteToken t{entry.substr(0, space)};
  if (space == std::string::npos) return t;
  const std::string scope = trimmed(entry.substr(space));
  if (scope.rfind("boards=", 0) != 0) {
    throw UsageError(where + ": after the token, only boards=GLOB,... may follow");
  }
  for (std::size_t start = 7; start <= scope.size();) {
    const std::size_t comma = std::min(scope.find(',', start), scope.size());
    const std::string glob = trimmed(scope.substr(start, comma - start));
    if (auto problem = board_pattern_problem(glob)) {
      throw UsageError(where + ": boards=: " + *problem + ": '" + glob + "'");
    }
    t.boards.push_back(glob);
    start = comma + 1;
  }
  return t;
}

}  // namespace

std::vector<std::string> load_read_tokens(const ServeConfig& config) {
  bool configured = false;
  auto tokens = load({"BOARDKEEPER_SERVE_TOKENS", "serve without authentication",
                      config.tokens_file, "serve.tokens_file", config.where},
                     configured);
  if (!configured) {
    spdlog::warn(
        "serve: no token source (serve.tokens_file, BOARDKEEPER_SERVE_TOKENS): /v1 is served "
        "without authentication to anyone who can connect");
  }
  return tokens;
}

std::vector<std::string> load_admin_tokens(const ServeConfig& config,
                                           const std::vector<std::string>& read_tokens) {
  bool configured = false;
  auto tokens = load({"BOARDKEEPER_SERVE_ADMIN_TOKENS", "keep the admin routes closed",
                      config.admin_tokens_file, "serve.admin_tokens_file", config.admin_where},
                     configured);
  for (const std::string& t : tokens) {
    if (std::find(read_tokens.begin(), read_tokens.end(), t) != read_tokens.end()) {
      throw UsageError(
          "a token is both a read token (BOARDKEEPER_SERVE_TOKENS, serve.tokens_file) and an "
          "admin token (BOARDKEEPER_SERVE_ADMIN_TOKENS, serve.admin_tokens_file): admin tokens "
          "must be distinct");
    }
  }
  if (!configured) {
    spdlog::info(
        "serve: no admin token (serve.admin_tokens_file, BOARDKEEPER_SERVE_ADMIN_TOKENS): the "
        "admin routes answer 403");
  }
  return tokens;
}

std::vector<api::WriteToken> load_write_tokens(const ServeConfig& config,
                                               const std::vector<std::string>& read_tokens,
                                               const std::vector<std::string>& admin_tokens) {
  bool configured = false;
  std::vector<int> lines;
  const auto entries =
      load({"BOARDKEEPER_SERVE_WRITE_TOKENS", "keep writes off", config.write_tokens_file,
            "serve.write_tokens_file", config.write_where},
           configured, &lines);
  std::vector<api::WriteToken> tokens;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = lines[i] == 0
                                  ? std::string("BOARDKEEPER_SERVE_WRITE_TOKENS")
                                  : config.write_tokens_file + ":" + std::to_string(lines[i]);
    // The variable's entries are tokens alone (a comma separates them, not a scope).
    if (lines[i] == 0 && entries[i].find_first_of(" \t") != std::string::npos) {
      throw UsageError(where +
                       ": a token holds a space; scopes (boards=) go in "
                       "serve.write_tokens_file");
    }
    tokens.push_back(lines[i] == 0 ? api::WriteToken{entries[i]} : write_token(entries[i], where));
    for (std::size_t j = 0; j + 1 < tokens.size(); ++j) {
      if (tokens[j].token == tokens.back().token) {
        throw UsageError(where + ": a write token listed twice (each with one scope)");
      }
    }
    const char* sources = "BOARDKEEPER_SERVE_WRITE_TOKENS, serve.write_tokens_file";
    check_distinct(tokens.back().token, read_tokens, "write", sources);
    check_distinct(tokens.back().token, admin_tokens, "write", sources);
  }
  if (!configured) {
    spdlog::info(
        "serve: no write token (serve.write_tokens_file, BOARDKEEPER_SERVE_WRITE_TOKENS): "
        "writes are off");
  }
  return tokens;
}

}  // namespace bk::http
