// bk_config_bench: how long a config of many board entries takes to load, against the raw
// baseline of yaml-cpp's own parser reading the same text with a handler that does nothing
// (the floor for any loader built on yaml-cpp), in the same process run. Also times the
// whole `boardkeeper check-config` command on the same file, and yaml-cpp's node graph
// (YAML::LoadAll, what the loader used before) for reference.
//
//   bk_config_bench [--entries N (200000)] [--rounds R (3)]
//
// Each entry is a block map like a real board's (name, periods, timezone, max_points,
// hot_keep, display, retention), plus one glob entry; every name is distinct. Medians of
// R rounds; the ratio is ours / raw.
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class NullHandler final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override { ++events; }
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override { ++events; }
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*a*/,
                const std::string& /*value*/) override {
    ++events;
  }
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/,
                       YAML::anchor_t /*anchor*/, YAML::EmitterStyle::value /*style*/) override {
    ++events;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    ++events;
  }
  void OnMapEnd() override {}
  long events = 0;
};

std::string make_config(long entries) {
  std::string yaml =
      "redis: {url: \"redis://127.0.0.1:6379/0\"}\n"
      "postgres: {url: \"postgresql://boardkeeper@127.0.0.1:5432/boards\"}\n"
      "boards:\n"
      "  - name: \"team:*\"\n    periods: [daily, weekly]\n    max_points: 1000000\n"
      "    retention: {default: 8d}\n";
  for (long i = 0; i < entries; ++i) {
    yaml += "  - name: board" + std::to_string(i) +
            "\n    periods: [daily, weekly]\n    timezone: Europe/Berlin\n"
            "    max_points: 1000000\n    hot_keep: 1000\n    display: 100\n"
            "    retention: {daily: 2d, weekly: 8d}\n";
  }
  return yaml;
}

int run_check_config(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    execl(BK_BINARY, BK_BINARY, "--config", path.c_str(), "check-config", nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Each side's seconds per round, and the rounds whose result was wrong.
struct Timings {
  std::vector<double> raw, ours, command, graph;
  int failures = 0;
};

// One round of the four sides on `yaml` (written to `path`, `entries` entries and the glob).
void time_round(const std::string& yaml, const char* path, long entries, Timings& t) {
  {
    auto start = Clock::now();
    std::istringstream in(yaml);
    YAML::Parser parser(in);
    NullHandler handler;
    while (parser.HandleNextDocument(handler)) {
    }
    t.raw.push_back(seconds_since(start));
  }
  {
    auto start = Clock::now();
    const bk::Config config = bk::parse_config(yaml, path, {});
    t.ours.push_back(seconds_since(start));
    // Every entry loaded, the glob included.
    if (config.boards.size() != static_cast<std::size_t>(entries) + 1) {
      std::fprintf(stderr, "FAIL loaded %zu boards, expected %ld\n", config.boards.size(),
                   entries + 1);
      ++t.failures;
    }
  }
  {
    auto start = Clock::now();
    const int code = run_check_config(path);
    t.command.push_back(seconds_since(start));
    if (code != 0) {
      std::fprintf(stderr, "FAIL boardkeeper check-config exited %d\n", code);
      ++t.failures;
    }
  }
  {
    auto start = Clock::now();
    { const auto documents = YAML::LoadAll(yaml); }
    t.graph.push_back(seconds_since(start));
  }
}

void print_timings(const Timings& t, long entries, std::size_t yaml_bytes, int rounds) {
  const double base = median(t.raw);
  std::printf("config load, %ld board entries (%.1f MB of YAML), median of %d rounds\n", entries,
              static_cast<double>(yaml_bytes) / 1e6, rounds);
  std::printf("  %-52s %8.3f s   1.00x\n", "raw: yaml-cpp's parser, a handler that does nothing",
              base);
  std::printf("  %-52s %8.3f s   %.2fx\n", "ours: parse_config (events -> tree -> Config)",
              median(t.ours), median(t.ours) / base);
  std::printf("  %-52s %8.3f s   %.2fx\n", "the command: boardkeeper check-config",
              median(t.command), median(t.command) / base);
  std::printf("  %-52s %8.3f s   %.2fx\n", "reference: YAML::LoadAll (yaml-cpp's node graph)",
              median(t.graph), median(t.graph) / base);
}

}  // namespace

int main(int argc, char** argv) {
  long entries = 200'000;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--entries" && i + 1 < argc) {
      entries = std::atol(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bk_config_bench [--entries N] [--rounds R]\n");
      return 2;
    }
  }
  if (entries < 1 || rounds < 1) {
    std::fprintf(stderr, "bk_config_bench: --entries and --rounds must be at least 1\n");
    return 2;
  }
  const std::string yaml = make_config(entries);
  char path[] = "/tmp/bk_config_bench.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  std::ofstream(path) << yaml;

  Timings t;
  for (int r = 0; r < rounds; ++r) time_round(yaml, path, entries, t);
  std::remove(path);
  print_timings(t, entries, yaml.size(), rounds);
  return t.failures == 0 ? 0 : 1;
}
