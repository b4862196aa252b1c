// What the Redis server spent and holds during a phase (tests/bench/bench.h): INFO's
// commandstats, CPU and memory, with a script's nested commands counted once.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "bench.h"

namespace bk_bench {

std::string Bench::info(RawRedis& raw, const std::string& section) {
  const auto r = raw.command({"INFO", section});
  return {r->str, r->len};
}

std::string Bench::info_field(const std::string& text, const std::string& field) {
  const auto at = text.find("\n" + field + ":");
  if (at == std::string::npos) fail("INFO has no " + field);
  const auto from = at + field.size() + 2;
  return text.substr(from, text.find('\r', from) - from);
}

std::int64_t Bench::used_memory(RawRedis& raw) {
  return std::stoll(info_field(info(raw, "memory"), "used_memory"));
}

double Bench::main_thread_cpu(RawRedis& raw) {
  const std::string cpu = info(raw, "cpu");
  return std::stod(info_field(cpu, "used_cpu_user_main_thread")) +
         std::stod(info_field(cpu, "used_cpu_sys_main_thread"));
}

std::vector<std::string> Bench::nested_commands() {
  std::vector<std::string> names;
  const std::filesystem::path hot = std::filesystem::path(BK_SOURCE_DIR) / "src" / "hot";
  int scripts = 0;
  for (const auto& entry : std::filesystem::directory_iterator(hot)) {
    if (entry.path().extension() != ".lua") continue;
    ++scripts;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\'' && text[i] != '"') continue;
      std::size_t j = i + 1;
      while (j < text.size() && std::isupper(static_cast<unsigned char>(text[j])) != 0) ++j;
      if (j < text.size() && text[j] == text[i] && j > i + 1) {
        std::string name = text.substr(i + 1, j - i - 1);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        i = j;
      }
    }
  }
  if (scripts == 0) fail("no Lua scripts in " + hot.string());
  // XACK is the consumer's own top-level command; the one script that also calls it
  // (dead letters) never runs here: the ingest phases fail on any dead letter.
  names.erase(std::remove(names.begin(), names.end(), "xack"), names.end());
  return names;
}

double Bench::start_server_use(RawRedis& raw) {
  raw.command({"CONFIG", "RESETSTAT"});
  return main_thread_cpu(raw);
}

Bench::ServerUse Bench::server_use(RawRedis& raw, double cpu0) {
  ServerUse use = commandstats_use(info(raw, "commandstats"));
  use.cpu_usec = (main_thread_cpu(raw) - cpu0) * 1e6;
  return use;
}

Bench::ServerUse Bench::commandstats_use(const std::string& commandstats) {
  ServerUse use;
  if (nested_.empty()) nested_ = nested_commands();
  std::istringstream lines(commandstats);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cmdstat_", 0) != 0) continue;
    const std::string name = line.substr(8, line.find(':') - 8);
    const auto u = line.find("usec=");
    const double usec = std::stod(line.substr(u + 5, line.find(',', u) - u - 5));
    // The bench's own (and ioredis's one INFO when it connects; a cluster client's map).
    if (name == "config|resetstat" || name == "info" || name == "cluster|slots") continue;
    if (std::find(nested_.begin(), nested_.end(), name) != nested_.end()) {
      use.nested.emplace_back(name, usec);
    } else {
      use.top_level.emplace_back(name, usec);
      use.usec += usec;
    }
  }
  const auto by_usec = [](const auto& a, const auto& b) { return a.second > b.second; };
  std::sort(use.top_level.begin(), use.top_level.end(), by_usec);
  std::sort(use.nested.begin(), use.nested.end(), by_usec);
  return use;
}

double Bench::usec_of(const ServerUse& use, const std::string& name) {
  double usec = 0;
  for (const auto* list : {&use.top_level, &use.nested}) {
    for (const auto& [n, u] : *list) usec += n == name ? u : 0;
  }
  return usec;
}

Bench::StreamSplit Bench::split_stream(const ServerUse& use) {
  StreamSplit split;
  double bounds = 0;
  for (const char* name : {"xinfo|groups", "xtrim", "xlen"}) bounds += usec_of(use, name);
  split.script = usec_of(use, "evalsha") - bounds;
  split.stream = bounds;
  for (const auto& [name, usec] : use.top_level) {
    if (name[0] == 'x' && name != "xinfo|groups") split.stream += usec;
  }
  return split;
}

}  // namespace bk_bench
