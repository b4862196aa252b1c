// A strict parser and validator of the Prometheus text exposition format (0.0.4) for
// tests, written independently of src/core/metrics so that it can catch its mistakes:
// line grammar, escapes, names, TYPE before samples, families contiguous, no duplicate
// series, histogram buckets cumulative with +Inf equal to _count.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk::test::prom {

using LabelMap = std::map<std::string, std::string>;

struct Sample {
  std::string name;  // as written: x, x_bucket, x_sum, x_count
  LabelMap labels;
  double value = 0;
  bool has_timestamp = false;
};

struct Family {
  std::string name;
  std::string type;  // counter gauge histogram summary untyped
  std::string help;  // unescaped; empty when there was no HELP line
  std::vector<Sample> samples;
};

struct Exposition {
  std::vector<Family> families;

  const Family* family(const std::string& name) const;
  // The value of the sample with exactly this name and these labels.
  std::optional<double> value(const std::string& sample_name, const LabelMap& labels = {}) const;
};

struct Parsed {
  Exposition exposition;
  std::string error;  // "line N: what is wrong"; empty when the text is valid
  bool ok() const { return error.empty(); }
};

Parsed parse(std::string_view text);

}  // namespace bk::test::prom
