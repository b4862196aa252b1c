// A running `serve` of a test's own config, and the CLI beside it: what the read tests
// (degrade_test, history_api_test, one_answer_test) compare; the answers' helpers every serve
// test shares.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <sstream>
#include <string>
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

class Served {
 public:
  Served(const std::string& config_path, const std::string& log, const std::string& now)
      : pid_(spawn_cli({"--config", config_path, "--now", now, "serve", "--listen", "127.0.0.1:0"},
                       log)),
        reaper_{pid_},
        port_(listening_port(log)),
        client_("127.0.0.1", port_) {
    client_.set_read_timeout(30, 0);
    client_.set_url_encode(false);  // the tests encode targets themselves
  }

  Answer get(const std::string& target) { return answer_of(client_.Get(target.c_str())); }
  int pid() const { return pid_; }

 private:
  int pid_;
  Reaper reaper_;
  int port_;
  httplib::Client client_;
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
