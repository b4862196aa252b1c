// A running `serve` of a test's own config, and the CLI beside it: what the read tests
// (degrade_test, history_api_test, one_answer_test) compare; the answers' helpers every serve
// test shares.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <stdlib.h>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"

namespace bk::test {

struct Answer {
  int status = 0;
  std::string text;  // the body as sent
  nlohmann::json body;
};

// The answer to a request: status 0 when none came (the client gave up or lost the connection).
inline Answer answer_of(const httplib::Result& r) {
  Answer a;
  if (!r) return a;
  a.status = r->status;
  a.text = r->body;
  a.body = nlohmann::json::parse(r->body, nullptr, false);
  return a;
}

// The "error" of a JSON error answer ("" when it is none).
inline std::string error_of(const Answer& a) {
  return a.body.is_object() ? a.body.value("error", "") : "";
}

// A running `serve` (on a free port, --now `now`), killed at the end of the scope. `env` is
// set for serve alone (a variable with an empty value is left unset); `options` go before
// the command (e.g. --log-level debug), `serve_options` after it (e.g. --workers 8).
class Served {
 public:
  using Env = std::vector<std::pair<std::string, std::string>>;

  Served(const std::string& config_path, const std::string& log, const std::string& now,
         const Env& env = {}, const std::vector<std::string>& options = {},
         const std::vector<std::string>& serve_options = {})
      : pid_(spawn(config_path, log, now, env, options, serve_options)),
        reaper_{pid_},
        port_(listening_port(log)),
        client_("127.0.0.1", port_) {
    client_.set_read_timeout(30, 0);
    client_.set_url_encode(false);  // the tests encode targets themselves
  }

  Answer get(const std::string& target, const httplib::Headers& headers = {}) {
    return answer_of(client_.Get(target.c_str(), headers));
  }
  Answer post(const std::string& target, const std::string& body,
              const httplib::Headers& headers = {}) {
    return answer_of(client_.Post(target.c_str(), headers, body, "application/json"));
  }
  // A POST whose body says it is `content_type`.
  Answer post_typed(const std::string& target, const std::string& body,
                    const httplib::Headers& headers, const std::string& content_type) {
    return answer_of(client_.Post(target.c_str(), headers, body, content_type.c_str()));
  }
  Answer put(const std::string& target, const httplib::Headers& headers,
             const std::string& body = "") {
    return answer_of(client_.Put(target.c_str(), headers, body, "application/json"));
  }
  Answer del(const std::string& target, const httplib::Headers& headers) {
    return answer_of(client_.Delete(target.c_str(), headers));
  }
  int pid() const { return pid_; }
  int port() const { return port_; }

 private:
  int pid_;
  Reaper reaper_;
  int port_;
  httplib::Client client_;

  static int spawn(const std::string& config_path, const std::string& log, const std::string& now,
                   const Env& env, const std::vector<std::string>& options,
                   const std::vector<std::string>& serve_options) {
    std::vector<std::string> args{"--config", config_path, "--now", now};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"serve", "--listen", "127.0.0.1:0"});
    args.insert(args.end(), serve_options.begin(), serve_options.end());
    for (const auto& [name, value] : env) {
      if (!value.empty()) setenv(name.c_str(), value.c_str(), 1);
    }
    const int pid = spawn_cli(args, log);
    for (const auto& [name, value] : env) unsetenv(name.c_str());
    return pid;
  }
};

// Percent-encodes every byte but unreserved ones.
inline std::string enc(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// The lines of a CLI --json answer, parsed; `raw` gets them as printed.
inline std::vector<nlohmann::json> json_lines(const RunResult& r,
                                              std::vector<std::string>* raw = nullptr) {
  std::vector<nlohmann::json> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (raw != nullptr) raw->push_back(line);
    out.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return out;
}

// The HTTP record of a CLI --json line: its record fields, those of a profile only when there.
inline nlohmann::json record_of(const nlohmann::json& line) {
  nlohmann::json r{{"rank", line["rank"]},
                   {"member", line["member"]},
                   {"points", line["points"]},
                   {"achieved_at", line["achieved_at"]}};
  for (const char* field : {"name", "metadata", "unavailable"}) {
    if (line.contains(field)) r[field] = line[field];
  }
  return r;
}

}  // namespace bk::test
