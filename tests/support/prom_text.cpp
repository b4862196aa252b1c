// The validator: one pass over the lines, then the histogram checks per family.
#include "prom_text.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace bk::test::prom {
namespace {

struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool metric_name_ok(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool label_name_ok(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// A float as Go's ParseFloat reads it in this format (Inf, NaN with an optional sign).
double parse_float(const std::string& s) {
  if (s == "+Inf" || s == "Inf") return HUGE_VAL;
  if (s == "-Inf") return -HUGE_VAL;
  if (s == "NaN") return std::nan("");
  if (s.empty()) throw Invalid("empty value");
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      throw Invalid("bad value '" + s + "'");
    }
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) throw Invalid("bad value '" + s + "'");
  return v;
}

std::string read_name(std::string_view line, std::size_t& pos) {
  const std::size_t start = pos;
  while (pos < line.size() && line[pos] != ' ' && line[pos] != '{' && line[pos] != '\t') ++pos;
  return std::string(line.substr(start, pos - start));
}

std::string unescape_help(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) throw Invalid("HELP ends in a lone backslash");
    if (s[i] == '\\') {
      out += '\\';
    } else if (s[i] == 'n') {
      out += '\n';
    } else {
      throw Invalid(std::string("invalid escape \\") + s[i] + " in HELP");
    }
  }
  return out;
}

LabelMap read_labels(std::string_view line, std::size_t& pos) {
  LabelMap labels;
  ++pos;  // '{'
  while (true) {
    if (pos >= line.size()) throw Invalid("unterminated label set");
    if (line[pos] == '}') {
      ++pos;
      return labels;
    }
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != '=') ++pos;
    const std::string name(line.substr(start, pos - start));
    if (!label_name_ok(name)) throw Invalid("invalid label name '" + name + "'");
    if (pos + 1 >= line.size() || line[pos + 1] != '"') throw Invalid("label value not quoted");
    pos += 2;
    std::string value;
    while (true) {
      if (pos >= line.size()) throw Invalid("unterminated label value");
      const char c = line[pos++];
      if (c == '"') break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos >= line.size()) throw Invalid("unterminated escape in label value");
      const char e = line[pos++];
      if (e == '\\') {
        value += '\\';
      } else if (e == '"') {
        value += '"';
      } else if (e == 'n') {
        value += '\n';
      } else {
        throw Invalid(std::string("invalid escape \\") + e + " in label value");
      }
    }
    if (!labels.emplace(name, value).second) throw Invalid("label '" + name + "' twice");
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
}

std::string series_key(const std::string& name, const LabelMap& labels) {
  std::string k = name + "{";
  for (const auto& [n, v] : labels) {
    k += n;
    k += "=\"";
    k += v;
    k += "\",";
  }
  return k + "}";
}

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_histogram(const Family& f) {
  // Per label set (without le): buckets in order, their le values, _sum and _count.
  struct Group {
    std::vector<std::pair<double, double>> buckets;  // le, cumulative count
    std::optional<double> sum, count;
  };
  std::map<LabelMap, Group> groups;
  for (const Sample& s : f.samples) {
    LabelMap labels = s.labels;
    if (s.name == f.name + "_bucket") {
      const auto le = labels.find("le");
      if (le == labels.end()) throw Invalid(f.name + "_bucket without le");
      const double bound = parse_float(le->second);
      labels.erase(le);
      groups[labels].buckets.emplace_back(bound, s.value);
    } else if (s.name == f.name + "_sum") {
      groups[labels].sum = s.value;
    } else if (s.name == f.name + "_count") {
      groups[labels].count = s.value;
    } else {
      throw Invalid("histogram " + f.name + " has a sample named " + s.name);
    }
  }
  for (const auto& [labels, g] : groups) {
    if (g.buckets.empty() || !std::isinf(g.buckets.back().first)) {
      throw Invalid("histogram " + f.name + ": the last bucket is not le=\"+Inf\"");
    }
    for (std::size_t i = 1; i < g.buckets.size(); ++i) {
      if (!(g.buckets[i - 1].first < g.buckets[i].first)) {
        throw Invalid("histogram " + f.name + ": bucket bounds do not ascend");
      }
      if (g.buckets[i].second < g.buckets[i - 1].second) {
        throw Invalid("histogram " + f.name + ": bucket counts are not cumulative");
      }
    }
    if (!g.sum || !g.count) throw Invalid("histogram " + f.name + " lacks _sum or _count");
    if (*g.count != g.buckets.back().second) {
      throw Invalid("histogram " + f.name + ": _count differs from the +Inf bucket");
    }
  }
}

}  // namespace

const Family* Exposition::family(const std::string& name) const {
  for (const Family& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::optional<double> Exposition::value(const std::string& sample_name,
                                        const LabelMap& labels) const {
  for (const Family& f : families) {
    for (const Sample& s : f.samples) {
      if (s.name == sample_name && s.labels == labels) return s.value;
    }
  }
  return std::nullopt;
}

namespace {

// One parse's state: the families so far, and what the format's rules need to know of them.
class Parser {
 public:
  explicit Parser(Exposition& e) : e_(e) {}

  // A # line: a family's HELP or TYPE (a plain comment is skipped).
  void comment(std::string_view line) {
    const bool help = line.rfind("# HELP ", 0) == 0;
    const bool type = line.rfind("# TYPE ", 0) == 0;
    if (!help && !type) return;  // a plain comment
    std::size_t p = 7;
    const std::string name = read_name(line, p);
    if (!metric_name_ok(name)) throw Invalid("invalid metric name '" + name + "'");
    if (p >= line.size() || line[p] != ' ') throw Invalid("no text after the name");
    const std::string_view rest = line.substr(p + 1);
    Family* f = family_of(name);
    if (f == nullptr) {
      if (finished_.count(name) != 0) throw Invalid(name + " is not contiguous");
      index_[name] = e_.families.size();
      e_.families.push_back(Family{name, "untyped", "", {}});
      f = &e_.families.back();
    }
    if (!f->samples.empty()) throw Invalid(name + ": HELP or TYPE after its samples");
    if (help) {
      if (!f->help.empty()) throw Invalid(name + ": HELP twice");
      f->help = unescape_help(rest);
    } else {
      static const std::set<std::string> kTypes{"counter", "gauge", "histogram", "summary",
                                                "untyped"};
      if (kTypes.count(std::string(rest)) == 0) {
        throw Invalid("unknown type '" + std::string(rest) + "'");
      }
      if (f->type != "untyped") throw Invalid(name + ": TYPE twice");
      f->type = std::string(rest);
    }
    if (!current_.empty() && current_ != name) finished_.insert(current_);
    current_ = name;
  }

  // A sample line, into its family.
  void sample(std::string_view line) {
    Sample s = read_sample(line);
    const std::string fam = family_name_of(s.name);
    Family* f = family_of(fam);
    if (f == nullptr || f->type == "untyped") throw Invalid(s.name + ": no TYPE before it");
    if (finished_.count(fam) != 0 || (!current_.empty() && current_ != fam)) {
      throw Invalid(s.name + ": its family " + fam + " is not contiguous");
    }
    if (f->type == "counter" && !(s.value >= 0)) throw Invalid(s.name + ": negative counter");
    if (!seen_series_.insert(series_key(s.name, s.labels)).second) {
      throw Invalid("duplicate series " + series_key(s.name, s.labels));
    }
    current_ = fam;
    f->samples.push_back(std::move(s));
  }

 private:
  Family* family_of(const std::string& name) {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &e_.families[it->second];
  }

  // name{labels} value [timestamp]
  static Sample read_sample(std::string_view line) {
    std::size_t p = 0;
    Sample s;
    s.name = read_name(line, p);
    if (!metric_name_ok(s.name)) throw Invalid("invalid metric name '" + s.name + "'");
    if (p < line.size() && line[p] == '{') s.labels = read_labels(line, p);
    if (p >= line.size() || line[p] != ' ') throw Invalid("no value after " + s.name);
    while (p < line.size() && line[p] == ' ') ++p;
    const std::string_view fields = line.substr(p);
    const std::size_t space = fields.find(' ');
    s.value = parse_float(std::string(fields.substr(0, space)));
    if (space != std::string_view::npos) {
      const std::string ts(fields.substr(space + 1));
      if (ts.empty() || ts.find_first_not_of("-0123456789") != std::string::npos) {
        throw Invalid("bad timestamp '" + ts + "'");
      }
      s.has_timestamp = true;
    }
    return s;
  }

  // The family: a histogram's or summary's derived samples belong to the base name.
  std::string family_name_of(const std::string& sample_name) {
    std::string fam = sample_name;
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (!has_suffix(sample_name, suffix)) continue;
      const std::string base = sample_name.substr(0, sample_name.size() - suffix.size());
      const Family* b = family_of(base);
      if (b != nullptr &&
          (b->type == "histogram" || (b->type == "summary" && suffix != "_bucket"))) {
        fam = base;
      }
    }
    return fam;
  }

  Exposition& e_;
  std::map<std::string, std::size_t> index_;  // family name -> position in e.families
  std::set<std::string> finished_;            // families another family followed
  std::set<std::string> seen_series_;
  std::string current_;  // the family of the previous sample
};

}  // namespace

Parsed parse(std::string_view text) {
  Parsed out;
  Parser parser(out.exposition);
  std::size_t line_no = 0;
  try {
    if (!text.empty() && text.back() != '\n') throw Invalid("the text does not end in a newline");
    std::size_t pos = 0;
    while (pos < text.size()) {
      ++line_no;
      const std::size_t end = text.find('\n', pos);
      const std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      if (line.empty()) continue;
      if (line[0] == '#') {
        parser.comment(line);
      } else {
        parser.sample(line);
      }
    }
    line_no = 0;
    for (const Family& f : out.exposition.families) {
      if (f.type == "histogram") check_histogram(f);
    }
  } catch (const Invalid& err) {
    out.error = (line_no > 0 ? "line " + std::to_string(line_no) + ": " : "") + err.what();
  }
  return out;
}

}  // namespace bk::test::prom
