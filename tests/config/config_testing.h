// What the config loader's tests share: parsing a config text as test.yaml, and finding
// each problem by its line, column and phrase.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "config/config.h"

namespace bk::config_testing {

using std::chrono::hours;
using std::chrono::minutes;

inline constexpr const char* kFile = "test.yaml";

inline Config parse(const std::string& yaml, const ConfigOverrides& overrides = {}) {
  return parse_config(yaml, kFile, overrides);
}

// The problems of a config that must not load.
inline std::vector<std::string> problems_of(const std::string& yaml,
                                            const ConfigOverrides& overrides = {}) {
  try {
    parse(yaml, overrides);
  } catch (const ConfigError& e) {
    return e.problems();
  }
  ADD_FAILURE() << "config loaded, expected a ConfigError:\n" << yaml;
  return {};
}

// Asserts that one problem is at `line`:`column` of test.yaml and contains `phrase`.
inline ::testing::AssertionResult HasProblem(const std::vector<std::string>& problems, int line,
                                             int column, const std::string& phrase) {
  const std::string prefix =
      std::string(kFile) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  for (const std::string& p : problems) {
    if (p.rfind(prefix, 0) == 0 && p.find(phrase) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  auto failure = ::testing::AssertionFailure()
                 << "no problem starting with '" << prefix << "' and containing '" << phrase
                 << "' among " << problems.size() << ":";
  for (const std::string& p : problems) failure << "\n  " << p;
  return failure;
}

// A board entry with only the required keys; `extra` lines are appended to it.
inline std::string minimal(const std::string& extra = "") {
  return "boards:\n"
         "  - name: points\n"
         "    periods: [daily]\n"
         "    max_points: 1000\n"
         "    retention: {daily: 2d}\n" +
         extra;
}

}  // namespace bk::config_testing
