// Passwords never show in what boardkeeper prints. Odd and malformed URLs (passwords holding
// / @ ? # % +, missing or mistyped schemes, IPv6 hosts with and without brackets, bad escapes
// and ports, servers that refuse connections) come from the config file, the environment and
// `tick --pushgateway`; every command runs with --log-level debug in both log formats. A
// malformed URL is a usage error (exit 2) for every command; a well-formed one whose server
// refuses is exit 3 (check-config connects to nothing: 0). Never a crash.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace bk {
namespace {

using test::run_cli;

enum class Expect { malformed, unreachable };

struct Case {
  std::string url;
  // The password as written in the URL and as decoded (each is checked in full and, when it
  // has 4 characters or more, every 4-character window of it).
  std::vector<std::string> secrets;
  Expect expect;
};

// Nothing listens on port 1 of the loopback: connections are refused at once.
const std::string kClosedRedis = "redis://127.0.0.1:1/0";
const std::string kClosedPostgres = "postgresql://bk@127.0.0.1:1/boards";

const std::vector<Case>& redis_cases() {
  static const std::vector<Case> cases{
      {"redis://bkuser:Rq7/pa/ssW@127.0.0.1:1/0", {"Rq7/pa/ssW"}, Expect::unreachable},
      {"redis://:Vx8@Kp@zQ@127.0.0.1:1/0", {"Vx8@Kp@zQ"}, Expect::unreachable},
      {"redis://u:Hm3?Qw#Ty@127.0.0.1:1/0", {"Hm3?Qw#Ty"}, Expect::unreachable},
      {"redis://u:Bn5+Zr%2FLk@127.0.0.1:1/0", {"Bn5+Zr%2FLk", "Bn5+Zr/Lk"}, Expect::unreachable},
      {"redis://Jr4SoloPw@127.0.0.1:1", {"Jr4SoloPw"}, Expect::unreachable},
      {"redis://u:Ys9pwIp6@[::1]:1/0", {"Ys9pwIp6"}, Expect::unreachable},
      {"redis://u:@127.0.0.1:1/0", {}, Expect::unreachable},
      {"redis://u:Gd4%4gYe@127.0.0.1:1/0", {"Gd4%4gYe"}, Expect::malformed},
      {"redis://u:Fj6%Wc@127.0.0.1:1/0", {"Fj6%Wc"}, Expect::malformed},
      {"redis://u:Pk2%zzMv@127.0.0.1:1/0", {"Pk2%zzMv"}, Expect::malformed},
      {"redis://u:Wt3pw/x@::1:1/0", {"Wt3pw/x"}, Expect::malformed},
      {"redis://u:Lq5pw@[::1:1/0", {"Lq5pw"}, Expect::malformed},
      {"redis://u:Cz7/pw@127.0.0.1:99999/0", {"Cz7/pw"}, Expect::malformed},
      {"redis://u:Nv4pw#@127.0.0.1:abc/0", {"Nv4pw#"}, Expect::malformed},
      {"redis://u:Qe5p/w@127.0.0.1:1/x", {"Qe5p/w"}, Expect::malformed},
      {"redis:/u:Ma8pw@127.0.0.1:1/0", {"Ma8pw"}, Expect::malformed},
      {"reddis://u:Ux2pw@127.0.0.1:1/0", {"Ux2pw"}, Expect::malformed},
      {"http://u:Ej6pw@127.0.0.1:1/0", {"Ej6pw"}, Expect::malformed},
      {"rediss://u:Ko3pw@127.0.0.1:1/0", {"Ko3pw"}, Expect::unreachable},
      {"rediss://u:Rb8pw@127.0.0.1:abc/0", {"Rb8pw"}, Expect::malformed},
      {"u:Zh2pw@127.0.0.1:1/0", {"Zh2pw"}, Expect::malformed},
  };
  return cases;
}

const std::vector<Case>& postgres_cases() {
  static const std::vector<Case> cases{
      {"postgresql://bkuser:PGs3cret/pa/ss@127.0.0.1:1/boards",
       {"PGs3cret/pa/ss"},
       Expect::malformed},
      {"postgresql://bk:Tr6@Xyw@127.0.0.1:1/boards", {"Tr6@Xyw"}, Expect::malformed},
      {"postgresql://bk:Hs4?Ab#Cd@127.0.0.1:1/boards", {"Hs4?Ab#Cd"}, Expect::unreachable},
      {"postgresql://bk:Mn7+Op%2FQr@127.0.0.1:1/boards",
       {"Mn7+Op%2FQr", "Mn7+Op/Qr"},
       Expect::unreachable},
      {"postgresql://bk:Vb3pwIp6@[::1]:1/boards", {"Vb3pwIp6"}, Expect::unreachable},
      {"postgres://bk@127.0.0.1:1/boards?password=Wo4pw%2Bz",
       {"Wo4pw%2Bz", "Wo4pw+z"},
       Expect::unreachable},
      {"postgresql://bk:Ep5pw@127.0.0.1:1/boards?sslmode=disable&connect_timeout=2",
       {"Ep5pw"},
       Expect::unreachable},
      {"postgresql://:Np7pwOnly@127.0.0.1:1", {"Np7pwOnly"}, Expect::unreachable},
      {"postgresql://bk:@127.0.0.1:1/boards", {}, Expect::unreachable},
      {"postgresql://bk:Dw2%4gEf@127.0.0.1:1/boards", {"Dw2%4gEf"}, Expect::malformed},
      {"postgresql://bk:Zp8%Gh@127.0.0.1:1/boards", {"Zp8%Gh"}, Expect::malformed},
      {"postgresql://bk:Kl9%zzIj@127.0.0.1:1/boards", {"Kl9%zzIj"}, Expect::malformed},
      {"postgresql://bk:Xc5pw@::1:1/boards", {"Xc5pw"}, Expect::malformed},
      {"postgresql://bk:Rf6pw@[::1:1/boards", {"Rf6pw"}, Expect::malformed},
      {"postgresql://bk:Ty7pw@127.0.0.1:99999/boards", {"Ty7pw"}, Expect::malformed},
      {"postgresql://bk:Gq2pw@127.0.0.1:1/boards?passwd=x", {"Gq2pw"}, Expect::malformed},
      {"postgres:/bk:Gu8pw@127.0.0.1:1/boards", {"Gu8pw"}, Expect::malformed},
      {"postgresq://bk:Ji9pw@127.0.0.1:1/boards", {"Ji9pw"}, Expect::malformed},
      {"host=127.0.0.1 port=1 dbname=boards user=bk password='Qa3 pw/x@y'",
       {"Qa3 pw/x@y"},
       Expect::malformed},
      {"host=127.0.0.1 port=1 password=Uk5pw", {"Uk5pw"}, Expect::malformed},
  };
  return cases;
}

const std::vector<Case>& pushgateway_cases() {
  static const std::vector<Case> cases{
      {"http://user:Pw8Push@127.0.0.1:1", {"Pw8Push"}, Expect::unreachable},
      {"http://user:Sd9/pu/sh@127.0.0.1:1/x", {"Sd9/pu/sh"}, Expect::unreachable},
      {"http://user:Bq4?pu#sh@127.0.0.1:1/x", {"Bq4?pu#sh"}, Expect::unreachable},
      {"https://u:Ax3pwTls@127.0.0.1:1", {"Ax3pwTls"}, Expect::unreachable},
      {"https://u:Kt7pw%2F@127.0.0.1:1", {"Kt7pw%2F", "Kt7pw/"}, Expect::unreachable},
      {"http://u:Oq4pw@[::1:1", {"Oq4pw"}, Expect::malformed},
      {"htp://u:Iw5pw@127.0.0.1:1", {"Iw5pw"}, Expect::malformed},
      {"http://u:Ce6%4gpw@127.0.0.1:1", {"Ce6%4gpw"}, Expect::malformed},
  };
  return cases;
}

const std::vector<std::vector<std::string>>& commands() {
  static const std::vector<std::vector<std::string>> all{
      {"migrate"},
      {"check-config"},
      {"add", "arena", "m1", "5"},
      {"top", "arena", "daily"},
      {"rank", "arena", "daily", "m1"},
      {"around", "arena", "daily", "m1"},
      {"periods", "arena"},
      {"tick"},
      {"ingest", "--drain"},
      {"history", "arena", "daily", "2026-01-01"},
  };
  return all;
}

// A YAML single-quoted scalar: no escapes but '' for '.
std::string yaml_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string write_config(const std::string& path, const std::string& redis_url,
                         const std::string& postgres_url) {
  std::ofstream(path) << "redis:\n  url: " << yaml_quoted(redis_url)
                      << "\npostgres:\n  url: " << yaml_quoted(postgres_url)
                      << "\nboards:\n  - name: arena\n    periods: [daily]\n    max_points: 100\n"
                         "    retention: {default: 1d}\n";
  return path;
}

// The first piece of a secret found in `text`: the whole secret, or (for secrets of four
// characters or more) any four consecutive characters of it. Empty when none.
std::string leak_in(const std::string& text, const std::vector<std::string>& secrets) {
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    if (text.find(s) != std::string::npos) return s;
    for (std::size_t i = 0; s.size() >= 4 && i + 4 <= s.size(); ++i) {
      if (text.find(s.substr(i, 4)) != std::string::npos) return s.substr(i, 4);
    }
  }
  return "";
}

struct Invocation {
  std::vector<std::string> args;
  std::vector<std::string> env;
  int expected_exit = 0;
  // ingest waits out an unreachable server (logging each failure): it is stopped after a
  // while with SIGTERM, and exits 0.
  std::chrono::milliseconds stop_after{0};
  std::vector<std::string> secrets;
  std::string label;
};

// Runs every run, four at a time; returns a line per failure.
std::vector<std::string> run_all(const std::vector<Invocation>& runs) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  const auto worker = [&] {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      const Invocation& run = runs[i];
      const test::RunResult r = run_cli(run.args, run.env, run.stop_after);
      std::string problem;
      const std::string both = r.out + "\n" + r.err;
      if (const std::string leaked = leak_in(both, run.secrets); !leaked.empty()) {
        problem = "shows '" + leaked + "'";
      } else if (r.exit_code != run.expected_exit) {
        problem = "exit " + std::to_string(r.exit_code) + ", expected " +
                  std::to_string(run.expected_exit);
      }
      if (!problem.empty()) {
        const std::lock_guard<std::mutex> lock(mutex);
        failures.push_back(run.label + ": " + problem + "\n    stdout: " + r.out +
                           "\n    stderr: " + r.err);
      }
    }
  };
  // Four at a time: the ingest runs mostly wait.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return failures;
}

enum class Backend { redis, postgres };
enum class Source { file, environment };

// Every case of `backend` through every command in both log formats, its URL given by
// `source`; the other backend's URL is well formed and refused.
std::vector<std::string> check(Backend backend, Source source) {
  const std::vector<Case>& cases = backend == Backend::redis ? redis_cases() : postgres_cases();
  const std::string prefix = test::unique_prefix();
  std::vector<Invocation> runs;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string path = "/tmp/bk-urlcase-" + prefix + "-" + std::to_string(i) + ".yaml";
    const std::string in_file = source == Source::file ? c.url : "set-by-environment";
    write_config(path, backend == Backend::redis ? in_file : kClosedRedis,
                 backend == Backend::postgres ? in_file : kClosedPostgres);
    files.push_back(path);
    std::vector<std::string> env;
    if (source == Source::environment) {
      env.push_back(
          (backend == Backend::redis ? "BOARDKEEPER_REDIS_URL=" : "BOARDKEEPER_POSTGRES_URL=") +
          c.url);
    }
    for (const auto& command : commands()) {
      for (const char* format : {"text", "json"}) {
        Invocation run;
        run.args = {"--config", path, "--log-level", "debug", "--log-format", format};
        run.args.insert(run.args.end(), command.begin(), command.end());
        run.env = env;
        run.secrets = c.secrets;
        run.expected_exit = c.expect == Expect::malformed  ? 2
                            : command[0] == "check-config" ? 0
                            : command[0] == "ingest"       ? 0
                                                           : 3;
        if (command[0] == "ingest" && c.expect != Expect::malformed) {
          run.stop_after = std::chrono::milliseconds{1000};
        }
        run.label = c.url + " | " + command[0] + " --log-format " + format;
        runs.push_back(std::move(run));
      }
    }
  }
  auto failures = run_all(runs);
  for (const std::string& f : files) std::remove(f.c_str());
  return failures;
}

void report(const std::vector<std::string>& failures) {
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

TEST(Secrets, RedisPasswordsInTheConfigFileNeverShow) {
  report(check(Backend::redis, Source::file));
}

TEST(Secrets, RedisPasswordsInTheEnvironmentNeverShow) {
  report(check(Backend::redis, Source::environment));
}

TEST(Secrets, PostgresPasswordsInTheConfigFileNeverShow) {
  report(check(Backend::postgres, Source::file));
}

TEST(Secrets, PostgresPasswordsInTheEnvironmentNeverShow) {
  report(check(Backend::postgres, Source::environment));
}

TEST(Secrets, PushgatewayPasswordsNeverShow) {
  const std::string prefix = test::unique_prefix();
  const std::string path =
      write_config("/tmp/bk-urlcase-" + prefix + ".yaml", kClosedRedis, kClosedPostgres);
  std::vector<Invocation> runs;
  for (const Case& c : pushgateway_cases()) {
    for (const char* format : {"text", "json"}) {
      Invocation run;
      run.args = {"--config", path,   "--log-level",   "debug", "--log-format",
                  format,     "tick", "--pushgateway", c.url};
      run.secrets = c.secrets;
      run.expected_exit = c.expect == Expect::malformed ? 2 : 3;
      run.label = c.url + " | tick --pushgateway --log-format " + format;
      runs.push_back(std::move(run));
    }
  }
  report(run_all(runs));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace bk
