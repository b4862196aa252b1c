// Metrics in the Prometheus text exposition format (0.0.4): a small registry of counters,
// gauges and fixed-bucket histograms with labels, and its rendering. Pure (no I/O); one
// thread may update it while another renders.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk::metrics {

// Label names and values; the order given does not matter (series are keyed by name).
using Labels = std::vector<std::pair<std::string, std::string>>;

enum class Type { counter, gauge, histogram };

// One metric family: a name, its help text, its type and its series (one per label set).
// Obtained from a Registry and valid as long as it. Misuse (a negative counter increment,
// set() on a counter, an invalid label name) throws std::invalid_argument or
// std::logic_error: those are programming errors, not runtime conditions.
class Family {
 public:
  const std::string& name() const { return name_; }
  Type type() const { return type_; }

  void add(double amount, const Labels& labels = {});     // counter or gauge; counter: >= 0
  void set(double value, const Labels& labels = {});      // gauge
  void observe(double value, const Labels& labels = {});  // histogram
  // Makes the series exist (at 0) so it is rendered before anything happens to it.
  void touch(const Labels& labels = {});
  // A counter's or gauge's current value, 0 when the series does not exist.
  double value(const Labels& labels = {}) const;

 private:
  struct Series {
    double value = 0;                   // counter, gauge
    std::vector<std::uint64_t> counts;  // histogram: per bucket (not cumulative), then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };

  friend class Registry;
  Family(std::mutex& mu, std::string name, std::string help, Type type, std::vector<double> bounds);
  Series& series(const Labels& labels);  // the caller holds mu_
  void render(std::string& out) const;   // likewise

  std::mutex& mu_;
  std::string name_;
  std::string help_;
  Type type_;
  std::vector<double> bounds_;  // histogram upper bounds, ascending, without +Inf
  std::vector<std::pair<Labels, Series>> series_;  // sorted by labels
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  ~Registry();

  // Declares a family (or returns the one declared under that name with the same type and
  // help). Counter names end in _total, others must not; names follow
  // [a-zA-Z_:][a-zA-Z0-9_:]* and may not collide with another family's samples.
  Family& counter(const std::string& name, const std::string& help);
  Family& gauge(const std::string& name, const std::string& help);
  // `upper_bounds`: ascending and finite; the +Inf bucket is implied.
  Family& histogram(const std::string& name, const std::string& help,
                    std::vector<double> upper_bounds);

  // Every family with at least one series, in declaration order, series ordered by labels:
  // "# HELP", "# TYPE", then the samples (no timestamps).
  std::string render() const;

 private:
  Family& declare(const std::string& name, const std::string& help, Type type,
                  std::vector<double> bounds);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;
};

bool valid_metric_name(std::string_view name);  // [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_label_name(std::string_view name);   // [a-zA-Z_][a-zA-Z0-9_]*, not __reserved

// HELP text: backslash and newline escaped.
std::string escape_help(std::string_view text);
// Label values: backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);
// The shortest text that reads back as the same double; +Inf, -Inf, NaN.
std::string format_value(double value);

// The value of the unlabelled sample `name` in rendered text, if there is one (used to
// carry a value from a previous rendering forward).
std::optional<double> find_sample(std::string_view text, std::string_view name);

}  // namespace bk::metrics
