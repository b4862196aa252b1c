// serve's bearer tokens from their sources (http/tokens.h).
#include "http/tokens.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <utility>
#include <vector>

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
  const char* kind;       // "read", "admin", "write"
  const char* env;        // comma-separated tokens
  const char* unset_env;  // what unsetting the variable would do
  std::string file;       // one a line
  std::string file_key;   // serve.tokens_file...
  std::string where;      // the config file's line of that key
};

Sources read_sources(const ServeConfig& c) {
  return {"read",        "BOARDKEEPER_SERVE_TOKENS", "serve without authentication",
          c.tokens_file, "serve.tokens_file",        c.where};
}
Sources admin_sources(const ServeConfig& c) {
  return {"admin",
          "BOARDKEEPER_SERVE_ADMIN_TOKENS",
          "keep the admin routes closed",
          c.admin_tokens_file,
          "serve.admin_tokens_file",
          c.admin_where};
}
Sources write_sources(const ServeConfig& c) {
  return {"write",
          "BOARDKEEPER_SERVE_WRITE_TOKENS",
          "keep writes off",
          c.write_tokens_file,
          "serve.write_tokens_file",
          c.write_where};
}

// A token as listed (a file's line whole: a write token's scope follows it) and where: the
// variable's name, or FILE:LINE.
struct Listed {
  std::string text;
  std::string where;
};

void of_list(const Sources& s, const std::string& list, std::vector<Listed>& out) {
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (std::string t = trimmed(list.substr(start, comma - start)); !t.empty()) {
      add_secret(t);  // never printed, whatever happens
      out.push_back({std::move(t), s.env});
    }
    start = comma + 1;
  }
}

void of_file(const Sources& s, std::vector<Listed>& out) {
  const std::string what = s.where + ": " + s.file_key + " '" + s.file + "'";
  std::ifstream in(s.file);
  if (!in) throw UsageError(what + " cannot be read");
  const std::size_t before = out.size();
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    line = trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    add_secret(line.substr(0, line.find_first_of(" \t")));  // a write token's, before its scope
    add_secret(line);
    out.push_back({std::move(line), s.file + ":" + std::to_string(n)});
  }
  if (out.size() == before) {
    throw UsageError(what + " names no token (one a line; blank lines and # comments are skipped)");
  }
}

// Both sources' tokens, the variable's first; nullopt when neither is set.
std::optional<std::vector<Listed>> load(const Sources& s) {
  std::vector<Listed> tokens;
  const char* env = std::getenv(s.env);
  if (env != nullptr) {
    of_list(s, env, tokens);
    if (tokens.empty()) {
      throw UsageError(std::string(s.env) + " is set but names no token (comma-separated " +
                       "tokens); unset it to " + s.unset_env);
    }
  }
  if (!s.file.empty()) of_file(s, tokens);
  if (env == nullptr && s.file.empty()) return std::nullopt;
  return tokens;
}

// `TOKEN` or `TOKEN boards=GLOB,...` (a line of the write tokens file; the variable's entries
// are tokens alone: a comma separates them, not a scope).
api::WriteToken write_token(const Listed& entry, bool from_file) {
  const std::size_t space = entry.text.find_first_of(" \t");
  api::WriteToken t{entry.text.substr(0, space)};
  if (space == std::string::npos) return t;
  if (!from_file) {
    throw UsageError(entry.where +
                     ": a token holds a space; scopes (boards=) go in serve.write_tokens_file");
  }
  const std::string scope = trimmed(entry.text.substr(space));
  if (scope.rfind("boards=", 0) != 0) {
    throw UsageError(entry.where + ": after the token, only boards=GLOB,... may follow");
  }
  for (std::size_t start = 7; start <= scope.size();) {
    const std::size_t comma = std::min(scope.find(',', start), scope.size());
    const std::string glob = trimmed(scope.substr(start, comma - start));
    if (auto problem = board_pattern_problem(glob)) {
      throw UsageError(entry.where + ": boards=: " + *problem + ": '" + glob + "'");
    }
    t.boards.push_back(glob);
    start = comma + 1;
  }
  return t;
}

// Each token of one kind; a write token of one scope.
class OneKindEach {
 public:
  void note(const std::string& token, const char* kind, const std::string& where) {
    const auto [it, fresh] = seen_.emplace(token, std::pair{kind, where});
    if (fresh) return;
    const auto& [other_kind, other_where] = it->second;
    if (std::string(other_kind) != kind) {
      throw UsageError(where + ": this " + kind + " token is also a " + other_kind + " token (" +
                       other_where + "): tokens must be distinct, each of one kind");
    }
    if (std::string(kind) == "write") {
      throw UsageError(where + ": a write token listed twice (also " + other_where +
                       "; each with one scope)");
    }
  }

 private:
  std::map<std::string, std::pair<const char*, std::string>> seen_;
};

}  // namespace

api::Tokens load_tokens(const ServeConfig& config) {
  api::Tokens tokens;
  OneKindEach kinds;
  for (const auto& [sources, into] : {std::pair{read_sources(config), &tokens.read},
                                      std::pair{admin_sources(config), &tokens.admin}}) {
    for (const Listed& t : load(sources).value_or(std::vector<Listed>{})) {
      kinds.note(t.text, sources.kind, t.where);
      into->push_back(t.text);
    }
  }
  const Sources writes = write_sources(config);
  for (const Listed& t : load(writes).value_or(std::vector<Listed>{})) {
    tokens.write.push_back(write_token(t, t.where != writes.env));
    kinds.note(tokens.write.back().token, "write", t.where);
  }
  return tokens;
}

void log_unset_token_sources(const ServeConfig& config) {
  const auto unset = [](const Sources& s) { return s.file.empty() && !std::getenv(s.env); };
  if (unset(read_sources(config))) {
    spdlog::warn(
        "serve: no token source (serve.tokens_file, BOARDKEEPER_SERVE_TOKENS): /v1 is served "
        "without authentication to anyone who can connect");
  }
  if (unset(admin_sources(config))) {
    spdlog::info(
        "serve: no admin token (serve.admin_tokens_file, BOARDKEEPER_SERVE_ADMIN_TOKENS): the "
        "admin routes answer 403");
  }
  if (unset(write_sources(config))) {
    spdlog::info(
        "serve: no write token (serve.write_tokens_file, BOARDKEEPER_SERVE_WRITE_TOKENS): "
        "writes are off");
  }
}

std::string token_counts(const api::Tokens& tokens) {
  return std::to_string(tokens.read.size()) + " read, " + std::to_string(tokens.admin.size()) +
         " admin, " + std::to_string(tokens.write.size()) + " write";
}

}  // namespace bk::http
