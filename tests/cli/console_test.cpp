// The console's pages as serve answers them (cli/console.cpp): no server, no browser. The
// browser test (tests/console) checks what they do; this checks what they are sent with and
// that nothing in them needs what the Content-Security-Policy forbids.
#include "cli/console.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace bk::cli {
namespace {

HttpServer::Request get(const std::string& path, const std::string& method = "GET") {
  return {method, path, path, "", ""};
}

std::string header(const HttpServer::Response& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(ConsoleTest, EveryPageCarriesTheStrictPolicyAndItsType) {
  for (const auto& [path, type] : std::vector<std::pair<std::string, std::string>>{
           {"/console", "text/html"},
           {"/console/", "text/html"},
           {"/console/console.css", "text/css"},
           {"/console/console.js", "text/javascript"}}) {
    const auto r = console_answer(get(path));
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->content_type.rfind(type, 0), 0U) << path << ": " << r->content_type;
    EXPECT_FALSE(r->body.empty()) << path;
    const std::string policy = header(*r, "Content-Security-Policy");
    EXPECT_NE(policy.find("default-src 'none'"), std::string::npos) << path;
    EXPECT_NE(policy.find("script-src 'self'"), std::string::npos) << path;
    EXPECT_EQ(policy.find("unsafe"), std::string::npos) << path << ": " << policy;
    EXPECT_EQ(header(*r, "X-Content-Type-Options"), "nosniff") << path;
  }
  EXPECT_EQ(console_paths().size(), 4U);
}

TEST(ConsoleTest, OtherPathsAreNotTheConsolesAndOtherMethodsAre405) {
  EXPECT_FALSE(console_answer(get("/console/nothing.js")));
  EXPECT_FALSE(console_answer(get("/consoles")));
  EXPECT_FALSE(console_answer(get("/v1/boards/b/periods")));
  const auto post = console_answer(get("/console/", "POST"));
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(header(*post, "Allow"), "GET, HEAD");
  EXPECT_NE(post->body.find("read-only"), std::string::npos) << post->body;
}

// What the policy would block would break the page: no inline script or style, no event
// handler attributes, nothing from another origin, no eval, no markup made from strings.
TEST(ConsoleTest, ThePagesNeedNothingThePolicyForbids) {
  const std::string html = console_answer(get("/console/"))->body;
  EXPECT_FALSE(std::regex_search(html, std::regex("<script(?![^>]*\\bsrc=)[^>]*>")))
      << "an inline script";
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=", std::regex::icase)))
      << "an event handler attribute";
  EXPECT_FALSE(std::regex_search(html, std::regex("\\sstyle\\s*=|<style"))) << "inline style";
  EXPECT_FALSE(std::regex_search(html, std::regex("(src|href)=\"(https?:)?//")))
      << "another origin";
  const std::string js = console_answer(get("/console/console.js"))->body;
  for (const char* banned : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                             "eval(", "new Function", "localStorage"}) {
    EXPECT_EQ(js.find(banned), std::string::npos) << "console.js uses " << banned;
  }
  EXPECT_NE(js.find("sessionStorage"), std::string::npos);
}

}  // namespace
}  // namespace bk::cli
