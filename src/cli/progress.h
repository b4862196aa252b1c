// Progress of long archives for people at a terminal: one line rewritten in place on
// stderr. Nothing at all when stderr is not a terminal or logs are JSON.
#pragma once
#include "lifecycle/archive.h"

namespace bk::cli {

// A progress callback for Tick, or an empty one when no progress should be shown. The line
// appears at the first report after the start (one chunk of hot members copied: smaller
// archives show nothing but the merge), is refreshed at most twice a second (the merge's
// line always shows), and is erased when the archive ends.
lifecycle::ArchiveProgressFn archive_progress_display();

}  // namespace bk::cli
