// The fixture of the write tests (write_api_test, idempotency_test, batch_api_test; its tokens
// also openapi_test's): a config with three boards, write tokens (one for every board, one
// scoped), read and admin tokens, and a serve over the test servers.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "harness.h"
#include "served.h"

namespace bk::test {

inline const char* kBoards = R"(  - name: pts
    periods: [daily, weekly]
    max_points: 1000
    hot_keep: 2
    display: 2
    retention: {default: 30d}
  - name: best
    periods: [daily]
    update: best
    max_points: 1000
    retention: {default: 30d}
  - name: other
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
)";

inline constexpr const char* kNow = "2026-11-25T12:00:00Z";
inline const std::string kWriter = "writer-token-7f3a";
inline const std::string kScoped = "scoped-writer-91c2";
inline const std::string kReader = "reader-token-0b4d";
inline const std::string kAdmin = "admin-token-5e61";

// serve's environment with the write tests' read, admin and write tokens.
inline Served::Env write_test_tokens() {
  return {{"BOARDKEEPER_SERVE_TOKENS", kReader},
          {"BOARDKEEPER_SERVE_ADMIN_TOKENS", kAdmin},
          {"BOARDKEEPER_SERVE_WRITE_TOKENS", kWriter}};
}

class WriteApiTest : public ::testing::Test {
 protected:
  using json = nlohmann::json;
  std::string prefix = test::unique_prefix();
  std::string tokens_file = "/tmp/" + prefix + "-write-tokens";
  std::string config_path;
  std::string log = "/tmp/" + prefix + "-serve.log";

  void SetUp() override {
    std::ofstream(tokens_file) << "# write tokens\n" << kScoped << " boards=best,oth*\n";
    config_path =
        test::write_text_config(prefix, test::config_text(prefix, kBoards) +
                                            "serve:\n  write_tokens_file: " + tokens_file + "\n");
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  Served serve() { return Served(config_path, log, kNow, write_test_tokens()); }
  static httplib::Headers as(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }
  static Answer write(Served& s, const std::string& board, const std::string& member,
                      const json& body, const std::string& token = kWriter) {
    return s.post("/v1/boards/" + board + "/members/" + member + "/scores", body.dump(), as(token));
  }
  static json period_of(const Answer& a, const std::string& period) {
    for (const json& p : a.body.at("periods")) {
      if (p.at("period") == period) return p;
    }
    ADD_FAILURE() << "no " << period << " in " << a.text;
    return json::object();
  }
  // The member's rank as the read API says it.
  static json read_rank(Served& s, const std::string& board, const std::string& period,
                        const std::string& member) {
    const Answer a =
        s.get("/v1/boards/" + board + "/" + period + "/members/" + member, as(kReader));
    return a.status == 200 ? a.body.at("rank") : json(nullptr);
  }
};

}  // namespace bk::test
