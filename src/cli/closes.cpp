// closes: the close notices PostgreSQL holds (cold/closes.h), oldest first; PostgreSQL only.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "cold/call_deadline.h"
#include "cold/closes.h"
#include "core/validate.h"

namespace bk::cli {
namespace {

constexpr std::int64_t kScanPage = 1000;  // notices read at a time while matching --board
// The whole listing's PostgreSQL calls, connecting included (a few indexed pages: far less
// when the server answers): a hung server ends the command, exit 3, instead of holding it.
constexpr std::chrono::seconds kDeadline{10};

// --since: a notice's seq (the entries after it) or an RFC 3339 time (archived then or later).
cold::Closes::Query query_of(const ClosesArgs& args) {
  cold::Closes::Query q;
  q.limit = args.limit;
  if (!args.since) {
    q.newest = true;  // the last --limit notices
    return q;
  }
  const std::string& s = *args.since;
  std::int64_t seq = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seq);
  if (ec == std::errc{} && end == s.data() + s.size() && seq >= 0) {
    q.after_seq = seq;
  } else if (const auto t = parse_rfc3339(s)) {
    q.since = *t;
  } else {
    throw UsageError("--since " + quoted(s) +
                     " is neither a notice's seq (0 or more) nor an RFC 3339 time");
  }
  return q;
}

// Up to args.limit notices of the boards matching the glob, in seq order.
std::vector<cold::CloseNotice> matching(cold::Closes& store, const ClosesArgs& args) {
  cold::Closes::Query q = query_of(args);
  q.limit = kScanPage;
  std::vector<cold::CloseNotice> out;
  for (;;) {
    const std::vector<cold::CloseNotice> page = store.page(q);
    std::vector<cold::CloseNotice> hits;
    for (const cold::CloseNotice& n : page) {
      if (board_matches(args.boards, n.key.board)) hits.push_back(n);
    }
    if (q.newest) {
      // Pages go backwards: this page's hits come before those kept so far.
      out.insert(out.begin(), hits.begin(), hits.end());
      if (static_cast<std::int64_t>(out.size()) > args.limit) {
        out.erase(out.begin(), out.end() - args.limit);
      }
      if (!page.empty()) q.before_seq = page.front().seq;
    } else {
      out.insert(out.end(), hits.begin(), hits.end());
      if (static_cast<std::int64_t>(out.size()) > args.limit) {
        out.resize(static_cast<std::size_t>(args.limit));
      }
      if (!page.empty()) q.after_seq = page.back().seq;
    }
    if (static_cast<std::int64_t>(page.size()) < kScanPage ||
        static_cast<std::int64_t>(out.size()) >= args.limit) {
      return out;
    }
  }
}

void print_json(const cold::CloseNotice& n) {
  std::cout << JsonLine()
                   .num("seq", n.seq)
                   .str("board", n.key.board)
                   .str("period", n.key.period)
                   .str("period_id", n.key.period_id)
                   .time("period_start", n.start)
                   .time("period_end", n.end)
                   .num("members", n.members)
                   .raw("tiers", n.tiers)
                   .flag("hot_lost", n.hot_lost)
                   .time("archived_at", n.archived_at)
                   .str("stream", n.stream)
                   .time("published_at", n.published_at)
                   .raw("league", n.league.value_or("null"))
                   .done()
            << "\n";
}

void print_text(const cold::CloseNotice& n) {
  std::cout << n.seq << "  " << printable(n.key.board) << " " << n.key.period << " "
            << n.key.period_id << "  " << n.members << " members  tiers " << n.tiers
            << "  archived " << format_rfc3339(n.archived_at) << "  "
            << (n.published_at ? "published " + format_rfc3339(*n.published_at)
                               : std::string("PENDING"))
            << " to " << printable(n.stream) << (n.hot_lost ? "  (hot part lost)" : "") << "\n";
}

}  // namespace

int closes(Context& ctx, const ClosesArgs& args) {
  check_range("--limit", args.limit, 1, 100000);
  if (const auto problem = board_pattern_problem(args.boards)) {
    throw UsageError("--board: " + *problem);
  }
  const cold::CallDeadline bounded(std::chrono::steady_clock::now() + kDeadline);
  // PostgreSQL only (no deployment check through Redis): notices are read with Redis down.
  cold::Closes store(ctx.schema_admin().link());
  const std::vector<cold::CloseNotice> notices = matching(store, args);
  const bool json = ctx.format() == Format::json;
  if (!json) {
    std::cout << "seq  board period period-id  members  tiers  archived  published to stream\n";
  }
  for (const cold::CloseNotice& n : notices) {
    if (json) {
      print_json(n);
    } else {
      print_text(n);
    }
  }
  if (!json && notices.empty()) std::cout << "  (none)\n";
  return 0;
}

}  // namespace bk::cli
