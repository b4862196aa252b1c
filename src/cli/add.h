// add's decisions, apart from the update itself: reading the arguments into an update, and
// what is printed (and the exit code) for each outcome. Pure, tested without servers.
#pragma once
#include <string>

#include "cli/commands.h"
#include "service/leaderboards.h"

namespace bk::cli {

// The update the arguments describe; a UsageError naming the value or --at when it is bad.
service::Update update_from(const AddArgs& args);

// What add prints for an outcome: stdout, stderr and the exit code.
struct AddReport {
  std::string out;
  std::string err;
  int exit_code = 0;
};

// Throws UnavailableError for an outcome that is not lasting (unavailable, waiting): exit 3.
// `--json` prints for an applied or duplicate update what the HTTP write answers (its
// standings: api/write.h), and for a refusal {"status", "board", "member", "reason"}.
AddReport report_of(const service::Update& update, const service::Written& written, bool json);

}  // namespace bk::cli
