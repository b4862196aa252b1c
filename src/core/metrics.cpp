// The registry and the text format. Everything is guarded by the registry's one mutex:
// updates are a few map operations, so contention is not a concern at our rates.
#include "core/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace bk::metrics {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

const char* type_name(Type t) {
  switch (t) {
    case Type::counter:
      return "counter";
    case Type::gauge:
      return "gauge";
    case Type::histogram:
      return "histogram";
  }
  return "untyped";
}

// Sorted by label name, names checked, no name twice.
Labels canonical(const Labels& labels, Type type) {
  Labels out = labels;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!valid_label_name(out[i].first)) {
      throw std::invalid_argument("invalid label name '" + out[i].first + "'");
    }
    if (type == Type::histogram && out[i].first == "le") {
      throw std::invalid_argument("label 'le' is reserved for histogram buckets");
    }
    if (i > 0 && out[i].first == out[i - 1].first) {
      throw std::invalid_argument("label '" + out[i].first + "' given twice");
    }
  }
  return out;
}

void append_labels(std::string& out, const Labels& labels, std::string_view le = {}) {
  if (labels.empty() && le.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ',';
    first = false;
    out += k;
    out += "=\"";
    out += escape_label_value(v);
    out += '"';
  }
  if (!le.empty()) {
    if (!first) out += ',';
    out += "le=\"";
    out += le;
    out += '"';
  }
  out += '}';
}

void append_sample(std::string& out, std::string_view name, const Labels& labels, double value,
                   std::string_view le = {}) {
  out += name;
  append_labels(out, labels, le);
  out += ' ';
  out += format_value(value);
  out += '\n';
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.rfind("__", 0) == 0) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string escape_help(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

std::optional<double> find_sample(std::string_view text, std::string_view name) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
        line[name.size()] != ' ') {
      continue;
    }
    std::string_view v = line.substr(name.size() + 1);
    v = v.substr(0, v.find(' '));  // a timestamp may follow
    double out = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    if (r.ec == std::errc{} && r.ptr == v.data() + v.size()) return out;
    return std::nullopt;
  }
  return std::nullopt;
}

Family::Family(std::mutex& mu, std::string name, std::string help, Type type,
               std::vector<double> bounds)
    : mu_(mu),
      name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      bounds_(std::move(bounds)) {}

Family::Series& Family::series(const Labels& labels) {
  Labels key = canonical(labels, type_);
  const auto it = std::lower_bound(series_.begin(), series_.end(), key,
                                   [](const auto& s, const Labels& k) { return s.first < k; });
  if (it != series_.end() && it->first == key) return it->second;
  Series s;
  if (type_ == Type::histogram) s.counts.assign(bounds_.size() + 1, 0);
  return series_.emplace(it, std::move(key), std::move(s))->second;
}

void Family::add(double amount, const Labels& labels) {
  if (type_ == Type::histogram) throw std::logic_error(name_ + ": add() on a histogram");
  if (type_ == Type::counter && !(amount >= 0)) {
    throw std::invalid_argument(name_ + ": a counter only goes up");
  }
  const std::lock_guard<std::mutex> lock(mu_);
  series(labels).value += amount;
}

void Family::set(double value, const Labels& labels) {
  if (type_ != Type::gauge) throw std::logic_error(name_ + ": set() on a non-gauge");
  const std::lock_guard<std::mutex> lock(mu_);
  series(labels).value = value;
}

void Family::observe(double value, const Labels& labels) {
  if (type_ != Type::histogram) throw std::logic_error(name_ + ": observe() on a non-histogram");
  const std::lock_guard<std::mutex> lock(mu_);
  Series& s = series(labels);
  // The first bucket whose upper bound holds the value (le: less than or equal).
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  ++s.counts[bucket];
  s.sum += value;
  ++s.count;
}

void Family::touch(const Labels& labels) {
  const std::lock_guard<std::mutex> lock(mu_);
  series(labels);
}

double Family::value(const Labels& labels) const {
  const std::lock_guard<std::mutex> lock(mu_);
  const Labels key = canonical(labels, type_);
  for (const auto& [k, s] : series_) {
    if (k == key) return s.value;
  }
  return 0;
}

void Family::render(std::string& out) const {
  if (series_.empty()) return;
  out += "# HELP ";
  out += name_;
  out += ' ';
  out += escape_help(help_);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type_name(type_);
  out += '\n';
  for (const auto& [labels, s] : series_) {
    if (type_ != Type::histogram) {
      append_sample(out, name_, labels, s.value);
      continue;
    }
    const std::string bucket = name_ + "_bucket";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += s.counts[i];
      append_sample(out, bucket, labels, static_cast<double>(cumulative), format_value(bounds_[i]));
    }
    cumulative += s.counts.back();
    append_sample(out, bucket, labels, static_cast<double>(cumulative), "+Inf");
    append_sample(out, name_ + "_sum", labels, s.sum);
    append_sample(out, name_ + "_count", labels, static_cast<double>(s.count));
  }
}

Registry::~Registry() = default;

Family& Registry::declare(const std::string& name, const std::string& help, Type type,
                          std::vector<double> bounds) {
  if (!valid_metric_name(name)) throw std::invalid_argument("invalid metric name '" + name + "'");
  if ((type == Type::counter) != ends_with(name, "_total")) {
    throw std::invalid_argument("metric '" + name +
                                "': counters, and only counters, end in _total");
  }
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
      throw std::invalid_argument("histogram '" + name + "': bounds must ascend and be finite");
    }
  }
  const std::lock_guard<std::mutex> lock(mu_);
  // The sample names a family renders, to refuse collisions between families.
  const auto samples = [](const std::string& n, Type t) {
    if (t != Type::histogram) return std::vector<std::string>{n};
    return std::vector<std::string>{n, n + "_bucket", n + "_sum", n + "_count"};
  };
  for (const auto& f : families_) {
    if (f->name_ == name) {
      if (f->type_ != type || f->help_ != help || f->bounds_ != bounds) {
        throw std::invalid_argument("metric '" + name + "' declared twice, differently");
      }
      return *f;
    }
    for (const auto& a : samples(name, type)) {
      for (const auto& b : samples(f->name_, f->type_)) {
        if (a == b) throw std::invalid_argument("metric '" + name + "' collides with " + f->name_);
      }
    }
  }
  families_.push_back(
      std::unique_ptr<Family>(new Family(mu_, name, help, type, std::move(bounds))));
  return *families_.back();
}

Family& Registry::counter(const std::string& name, const std::string& help) {
  return declare(name, help, Type::counter, {});
}

Family& Registry::gauge(const std::string& name, const std::string& help) {
  return declare(name, help, Type::gauge, {});
}

Family& Registry::histogram(const std::string& name, const std::string& help,
                            std::vector<double> upper_bounds) {
  return declare(name, help, Type::histogram, std::move(upper_bounds));
}

std::string Registry::render() const {
  const std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& f : families_) f->render(out);
  return out;
}

}  // namespace bk::metrics
