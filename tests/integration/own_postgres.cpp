// The test's own PostgreSQL server (see own_postgres.h): initdb, pg_ctl, and signals to the
// postmaster and its children found through /proc.
#include "own_postgres.h"

#include <dirent.h>
#include <glob.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "harness.h"

namespace bk::test {
namespace {

// The newest PostgreSQL's bin directory, as deploy/local/setup.sh picks it.
std::string postgres_bin() {
  glob_t found{};
  std::string best;
  if (glob("/usr/lib/postgresql/*/bin", 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) {
      const std::string dir = found.gl_pathv[i];
      if (dir.size() > best.size() || (dir.size() == best.size() && dir > best)) best = dir;
    }
  }
  globfree(&found);
  if (best.empty()) ADD_FAILURE() << "no /usr/lib/postgresql/*/bin";
  return best;
}

// Runs `command` with sh, as the postgres user when this is root.
int run_as_postgres(const std::string& command) {
  const std::string line =
      getuid() == 0 ? "runuser -u postgres -- sh -c '" + command + "'" : command;
  return std::system((line + " >/dev/null 2>&1").c_str());
}

// The parent pid of `pid` (from /proc/<pid>/stat), -1 when gone.
int parent_of(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return -1;
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 2));
  char state = 0;
  int ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

std::vector<int> children_of(int parent) {
  std::vector<int> out;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  for (dirent* e = readdir(proc); e != nullptr; e = readdir(proc)) {
    const int pid = std::atoi(e->d_name);
    if (pid > 0 && parent_of(pid) == parent) out.push_back(pid);
  }
  closedir(proc);
  return out;
}

std::string temp_dir() {
  char dir[] = "/tmp/bk-pg-XXXXXX";
  const std::string made = mkdtemp(dir);
  if (getuid() == 0) std::system(("chown postgres '" + made + "'").c_str());
  return made;
}

}  // namespace

PostgresServer::PostgresServer()
    : dir_(temp_dir()),
      bin_(postgres_bin()),
      port_(free_port()),
      options_("-c listen_addresses=127.0.0.1 -c fsync=off") {
  if (run_as_postgres(bin_ + "/initdb -D " + dir_ + "/data" +
                      " -U boardkeeper --auth=trust -E UTF8 --locale=C.UTF-8") != 0 ||
      !start_server() ||
      run_as_postgres(bin_ + "/createdb -h 127.0.0.1 -p " + std::to_string(port_) +
                      " -U boardkeeper boards") != 0) {
    ADD_FAILURE() << "the test's own PostgreSQL did not start (see " << dir_ << "/server.log)";
  }
}

PostgresServer::PostgresServer(ReplicaOf replica)
    : dir_(temp_dir()),
      bin_(replica.primary.bin_),
      port_(free_port()),
      options_("-c listen_addresses=127.0.0.1 -c fsync=off -c hot_standby_feedback=on") {
  if (run_as_postgres(bin_ + "/pg_basebackup -h 127.0.0.1 -p " +
                      std::to_string(replica.primary.port_) + " -U boardkeeper -D " + dir_ +
                      "/data -R -X stream -c fast") != 0 ||
      !start_server()) {
    ADD_FAILURE() << "the test's own PostgreSQL replica did not start (see " << dir_
                  << "/server.log)";
  }
}

bool PostgresServer::start_server() {
  const std::string data = dir_ + "/data";
  if (run_as_postgres(bin_ + "/pg_ctl -D " + data + " -w -l " + dir_ + "/server.log -o \"-p " +
                      std::to_string(port_) + " -k " + dir_ + " " + options_ + "\" start") != 0) {
    return false;
  }
  std::ifstream pidfile(data + "/postmaster.pid");
  pidfile >> postmaster_;
  return true;
}

void PostgresServer::stop() {
  thaw();
  run_as_postgres(bin_ + "/pg_ctl -D " + dir_ + "/data -m fast -w stop");
  postmaster_ = -1;
}

void PostgresServer::start() {
  if (!start_server()) ADD_FAILURE() << "PostgreSQL did not start again (see " << dir_ << ")";
}

std::string PostgresServer::sql(const std::string& statement) const {
  return psql_at(url(), statement);
}

PostgresServer::~PostgresServer() {
  thaw();
  run_as_postgres(bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop");
  std::system(("rm -rf '" + dir_ + "'").c_str());
}

std::string PostgresServer::url() const {
  return "postgresql://boardkeeper@127.0.0.1:" + std::to_string(port_) + "/boards";
}

void PostgresServer::signal_all(int sig) const {
  if (postmaster_ <= 0) return;
  // The postmaster first when freezing (it then starts no backend), last when thawing.
  if (sig == SIGSTOP) kill(postmaster_, sig);
  for (const int child : children_of(postmaster_)) kill(child, sig);
  if (sig != SIGSTOP) kill(postmaster_, sig);
}

void PostgresServer::freeze() {
  signal_all(SIGSTOP);
}

void PostgresServer::thaw() {
  signal_all(SIGCONT);
}

}  // namespace bk::test
