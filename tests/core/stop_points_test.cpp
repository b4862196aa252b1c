// The test-only pause points (core/stop_points.h): BK_TEST_STOP_AT's parser, and that an armed
// point stops the process at its n-th arrival and not before (in a forked child).
#include "core/stop_points.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace bk {
namespace {

std::string refusal(const std::string& value) {
  try {
    arm_stop_points(value);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(StopPoints, EveryPointHasAStableNameThatReadsBack) {
  for (const StopPoint p :
       {StopPoint::archive_begin, StopPoint::archive_before_commit, StopPoint::notice_before_commit,
        StopPoint::notice_written, StopPoint::archive_released, StopPoint::publish_marked_through,
        StopPoint::publish_before_xadd, StopPoint::publish_after_xadd, StopPoint::mark_done}) {
    EXPECT_EQ(stop_point_named(stop_point_name(p)), p) << stop_point_name(p);
  }
  EXPECT_EQ(stop_point_name(StopPoint::publish_after_xadd), "publish.after_xadd");
  EXPECT_EQ(stop_point_named("archive"), std::nullopt);
}

TEST(StopPoints, AMalformedValueIsRefusedNamingItAndTheKnownPoints) {
  for (const char* bad : {"archive.begin", "archive.begin:", "archive.begin:0", "archive.begin:-1",
                          "archive.begin:2x", "archive.begin: 2", "nowhere:1", ":1", "1"}) {
    const std::string why = refusal(bad);
    EXPECT_NE(why.find(std::string("BK_TEST_STOP_AT='") + bad + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("mark.done"), std::string::npos) << why;
  }
  EXPECT_EQ(refusal("notice.written:3"), "");
  arm_stop_points(std::nullopt);
}

TEST(StopPoints, UnsetTheVariableArmsNothing) {
  ::unsetenv(kStopAtVariable);
  EXPECT_EQ(arm_stop_points_from_env(), std::nullopt);
  ::setenv(kStopAtVariable, "", 1);
  EXPECT_EQ(arm_stop_points_from_env(), std::nullopt);
  ::setenv(kStopAtVariable, "mark.done:2", 1);
  EXPECT_EQ(arm_stop_points_from_env(), "mark.done:2");
  ::unsetenv(kStopAtVariable);
  arm_stop_points(std::nullopt);
}

// A child armed at publish.after_xadd:3 passes other points and that one twice (telling the
// parent through a pipe after each), then stops at the third arrival.
TEST(StopPoints, TheArmedPointStopsTheProcessAtItsNthArrivalOnly) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    arm_stop_points(std::string("publish.after_xadd:3"));
    for (int i = 0; i < 3; ++i) {
      stop_point(StopPoint::publish_before_xadd);
      stop_point(StopPoint::mark_done);
      stop_point(StopPoint::publish_after_xadd);
      if (write(fds[1], "x", 1) != 1) _exit(3);  // after the 3rd: only once continued
    }
    _exit(0);
  }
  close(fds[1]);
  char got[4] = {};
  ASSERT_EQ(read(fds[0], got, 1), 1);
  ASSERT_EQ(read(fds[0], got + 1, 1), 1);
  // Stopped, within a deadline, before its third write.
  int status = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{30};
  while (waitpid(pid, &status, WUNTRACED | WNOHANG) == 0 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  EXPECT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP) << status;
  // Continued, it finishes: the point stops once.
  kill(pid, SIGCONT);
  ASSERT_EQ(read(fds[0], got + 2, 1), 1);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(fds[0]);
}

}  // namespace
}  // namespace bk
