// The harness's promise that a test stops what it started: a boardkeeper command a test
// spawned does not outlive the test process, also when the test ends without stopping it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "harness.h"

namespace bk::test {
namespace {

// Whether `pid` is still a live process (not gone, not a zombie waiting to be reaped).
bool running(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("State:", 0) == 0) return line.find('Z') == std::string::npos;
  }
  return false;
}

// Whether `pid` runs boardkeeper's ingest (its exec is done).
bool started(pid_t pid) {
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string text((std::istreambuf_iterator<char>(cmdline)),
                         std::istreambuf_iterator<char>());
  return text.find("ingest") != std::string::npos && running(pid);
}

// A process stands in for a test binary that spawns `ingest` and then dies the way a
// failed or timed-out test does (no clean-up: _exit, as after a ctest timeout's SIGKILL).
TEST(Harness, ACommandSpawnedByATestDiesWithTheTestProcess) {
  const std::string config =
      write_text_config(unique_prefix(), config_text(unique_prefix(), R"(  - name: b
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
)"));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t test_process = fork();
  ASSERT_GE(test_process, 0);
  if (test_process == 0) {
    close(pipe_fds[0]);
    const int ingest =
        spawn_cli({"--config", config, "ingest"}, "/tmp/bk-harness-" + std::to_string(getpid()));
    // Dies only once ingest runs (its program started), like a test failing mid-way.
    for (int i = 0; i < 100 && !started(ingest); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
    ssize_t written = write(pipe_fds[1], &ingest, sizeof ingest);
    _exit(written == sizeof ingest ? 1 : 2);
  }
  close(pipe_fds[1]);
  int ingest = 0;
  ASSERT_EQ(read(pipe_fds[0], &ingest, sizeof ingest), static_cast<ssize_t>(sizeof ingest));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(test_process, &status, 0);
  ASSERT_GT(ingest, 0);
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {  // up to 30 s on a loaded machine; usually at once
    gone = !running(ingest);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  if (!gone) kill(ingest, SIGKILL);  // do not leave it behind for the next test either
  EXPECT_TRUE(gone) << "ingest (pid " << ingest << ") outlived the process that spawned it";
}

}  // namespace
}  // namespace bk::test
