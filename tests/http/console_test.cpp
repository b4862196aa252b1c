// The console's pages as serve answers them (http/console.cpp): no server, no browser. The
// browser test (tests/console) checks what they do; this checks what they are sent with and
// that nothing in them needs what the Content-Security-Policy forbids.
#include "http/console.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

namespace bk::http {
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
    // X-Content-Type-Options: nosniff comes with every answer of the server (server_test).
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

// The markup is scanned by hand: GCC 12 warns inside std::regex under ASan (-Werror), as
// tests/cold/statements_test.cpp found before.
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Each tag of the markup that starts with `<name`, up to its `>`.
std::vector<std::string> tags(const std::string& html, const std::string& name) {
  std::vector<std::string> out;
  for (auto at = html.find("<" + name); at != std::string::npos;
       at = html.find("<" + name, at + 1)) {
    const auto end = html.find('>', at);
    out.push_back(html.substr(at, end == std::string::npos ? std::string::npos : end - at + 1));
  }
  return out;
}

// Whether an attribute `name=` (spaces allowed around the `=`) follows white space, where
// `name` is `prefix` then, when `any_letters`, one or more letters (on + click, on + load...).
bool has_attribute(const std::string& html, const std::string& prefix, bool any_letters) {
  for (auto at = html.find(prefix); at != std::string::npos; at = html.find(prefix, at + 1)) {
    if (at == 0 || !std::isspace(static_cast<unsigned char>(html[at - 1]))) continue;
    auto i = at + prefix.size();
    const auto letters = i;
    while (any_letters && i < html.size() && std::islower(static_cast<unsigned char>(html[i]))) {
      ++i;
    }
    if (any_letters && i == letters) continue;
    while (i < html.size() && std::isspace(static_cast<unsigned char>(html[i]))) ++i;
    if (i < html.size() && html[i] == '=') return true;
  }
  return false;
}

// The scan above finds what it looks for (a scan that cannot fail checks nothing).
TEST(ConsoleTest, TheScanFindsInlineScriptsHandlersStylesAndOtherOrigins) {
  EXPECT_EQ(tags("<p><script>x</script><script src=\"a.js\"></script>", "script").size(), 2U);
  EXPECT_FALSE(has_attribute("<script>", "src", false));
  EXPECT_TRUE(has_attribute("<script defer src = \"a.js\">", "src", false));
  EXPECT_TRUE(has_attribute("<img src=x onerror=alert(1)>", "on", true));
  EXPECT_TRUE(has_attribute("<body\nonload =go()>", "on", true));
  EXPECT_FALSE(has_attribute("<p>turn on = off</p>", "on", true));
  EXPECT_FALSE(has_attribute("<p class=\"button\">", "on", true));
  EXPECT_TRUE(has_attribute("<p style=\"color:red\">", "style", false));
  EXPECT_FALSE(has_attribute("<link rel=\"stylesheet\" href=\"console.css\">", "style", false));
}

// What the policy would block would break the page: no inline script or style, no event
// handler attributes, nothing from another origin, no eval, no markup made from strings.
TEST(ConsoleTest, ThePagesNeedNothingThePolicyForbids) {
  const std::string html = lower(console_answer(get("/console/"))->body);
  ASSERT_FALSE(tags(html, "script").empty());
  for (const auto& tag : tags(html, "script")) {
    EXPECT_TRUE(has_attribute(tag, "src", false)) << "an inline script: " << tag;
  }
  EXPECT_FALSE(has_attribute(html, "on", true)) << "an event handler attribute";
  EXPECT_FALSE(has_attribute(html, "style", false)) << "inline style";
  EXPECT_TRUE(tags(html, "style").empty()) << "inline style";
  for (const char* other :
       {"src=\"//", "src=\"http:", "src=\"https:", "href=\"//", "href=\"http:", "href=\"https:"}) {
    EXPECT_EQ(html.find(other), std::string::npos) << "another origin: " << other;
  }
  const std::string js = console_answer(get("/console/console.js"))->body;
  for (const char* banned : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                             "eval(", "new Function", "localStorage"}) {
    EXPECT_EQ(js.find(banned), std::string::npos) << "console.js uses " << banned;
  }
  EXPECT_NE(js.find("sessionStorage"), std::string::npos);
}

}  // namespace
}  // namespace bk::http
