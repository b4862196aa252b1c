// Reading the streams in the consumer group (see reader.h): every read goes through
// group_command / group_pipeline, which create a lost group again and repeat the read.
#include "lifecycle/consumer/reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "redis/error.h"

namespace bk::lifecycle::consumer {
namespace {

redis::Options with_role(redis::Options options, const char* role) {
  options.role = role;
  return options;
}

void append(std::vector<Entry>& to, std::vector<Entry>&& more) {
  to.insert(to.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

}  // namespace

StreamReader::StreamReader(redis::Connection& redis, const IngestOptions& options,
                           const std::vector<StreamNames>& streams, const IngestStats& totals,
                           IngestObserver& observer)
    : redis_(redis),
      ahead_(with_role(redis.options(), "read-ahead"), redis::Connect::later),
      o_(options),
      streams_(streams),
      totals_(totals),
      observer_(observer),
      cursors_(streams.size()),
      groups_(redis.key_groups(options.streams)) {}

// A command on the group; a group Redis lost (restart without persistence, FLUSHALL) is
// created again (on every stream that lacks it), and the command repeated.
redis::Reply StreamReader::group_command(const redis::Args& args) {
  redis::Reply r = redis_.command(args);
  if (hot::is_no_group(r)) {
    create_groups();
    r = redis_.command(args);
  }
  r.checked();
  observer_.redis_round_trip();
  return r;
}

// Several commands on the group in one round trip, as group_command does one: only those
// that found their group gone are sent again (the others' reads were delivered).
std::vector<redis::Reply> StreamReader::group_pipeline(const std::vector<redis::Args>& commands) {
  std::vector<redis::Reply> replies = redis_.pipeline(commands);
  bool created = false;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (!hot::is_no_group(replies[i])) continue;
    if (!created) create_groups();
    created = true;
    replies[i] = redis_.command(commands[i]);
  }
  for (const redis::Reply& r : replies) r.checked();
  observer_.redis_round_trip();
  return replies;
}

void StreamReader::create_groups() {
  for (const StreamNames& s : streams_) {
    if (hot::create_group(redis_, ref(s)) == hot::GroupCreation::existed) continue;
    if (totals_.read > 0) {
      spdlog::warn(
          "ingest: consumer group {} of stream {} was gone (Redis lost its data?); created "
          "again, reading the stream from its start",
          o_.group, s.key);
    } else {
      spdlog::info("ingest: created consumer group {} of stream {}", o_.group, s.key);
    }
  }
}

std::size_t StreamReader::index_of(const std::string& key) const {
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].key == key) return i;
  }
  throw redis::ReplyError("ingest: Redis answered for stream '" + key + "', which was not read");
}

// The entries of an XREADGROUP reply; `answered` collects the indexes of the streams that
// had some.
std::vector<Entry> StreamReader::entries_of_read(redis::Reply r, std::vector<bool>* answered) {
  std::vector<Entry> entries;
  for (hot::StreamEntries& s : hot::parse_group_read(std::move(r))) {
    const std::size_t i = index_of(s.stream);
    auto more = entries_of(std::move(s.entries), i);
    if (answered != nullptr && !more.empty()) (*answered)[i] = true;
    append(entries, std::move(more));
  }
  return entries;
}

// The entries of reads of several groups, in the order of the reads.
std::vector<Entry> StreamReader::entries_of_reads(const std::vector<redis::Args>& reads,
                                                  std::vector<bool>* answered) {
  if (reads.size() == 1) return entries_of_read(group_command(reads.front()), answered);
  std::vector<Entry> entries;
  for (redis::Reply& r : group_pipeline(reads)) {
    append(entries, entries_of_read(std::move(r), answered));
  }
  return entries;
}

void StreamReader::start_own_pass() {
  for (Cursors& c : cursors_) c.own = "0";
}

std::vector<Entry> StreamReader::read_own() {
  // One read per group of streams still in the pass.
  std::vector<redis::Args> reads;
  for (const auto& group : groups_) {
    hot::GroupRead read{o_.group, o_.consumer, o_.batch, std::nullopt, {}};
    for (const std::size_t i : group) {
      if (!cursors_[i].own.empty()) read.streams.emplace_back(streams_[i].key, cursors_[i].own);
    }
    if (read.streams.empty()) continue;
    reads.push_back(hot::read_group(read));
  }
  if (reads.empty()) return {};
  std::vector<bool> answered(streams_.size(), false);
  std::vector<Entry> entries = entries_of_reads(reads, &answered);
  // A stream that had nothing more is done for this pass; the others go on after the last
  // entry read.
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (!answered[i]) cursors_[i].own.clear();
  }
  for (const Entry& e : entries) cursors_[e.stream].own = e.id;
  return entries;
}

void StreamReader::end_own_pass() {
  for (Cursors& c : cursors_) c.own.clear();
}

bool StreamReader::claim_running() const {
  return std::any_of(cursors_.begin(), cursors_.end(),
                     [](const Cursors& c) { return c.claim != "0-0"; });
}

bool StreamReader::claim_due() const {
  const auto now = Steady::now();
  return std::any_of(cursors_.begin(), cursors_.end(),
                     [now](const Cursors& c) { return c.claim != "0-0" || now >= c.next_claim; });
}

std::vector<Entry> StreamReader::reclaim() {
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    Cursors& c = cursors_[i];
    if (c.claim == "0-0" && Steady::now() < c.next_claim) continue;
    hot::TakenOver claimed = hot::parse_take_over(group_command(
        hot::take_over(ref(streams_[i]), {o_.consumer, o_.reclaim_idle, c.claim, o_.batch})));
    c.claim = std::move(claimed.cursor);
    if (c.claim == "0-0") c.next_claim = Steady::now() + o_.reclaim_idle / 2;
    append(entries, entries_of(std::move(claimed.entries), i));
  }
  return entries;
}

void StreamReader::claim_soon() {
  if (next_wait_ % groups_.size() == 0) {
    for (Cursors& c : cursors_) c.next_claim = Steady::now();
  }
}

// XREADGROUP of new entries of one group of streams; waiting up to `block` for some (none:
// not waiting).
redis::Args StreamReader::read_new_command(const std::vector<std::size_t>& group,
                                           std::optional<Millis> block) const {
  hot::GroupRead read{o_.group, o_.consumer, o_.batch, block, {}};
  for (const std::size_t i : group) read.streams.emplace_back(streams_[i].key, ">");
  return hot::read_group(read);
}

std::vector<Entry> StreamReader::read_new() {
  // With --drain an empty read ends the run, so it does not wait for new entries.
  if (groups_.size() == 1) {
    return entries_of_read(group_command(
        read_new_command(groups_.front(), o_.drain ? std::nullopt : std::optional(o_.block))));
  }
  std::vector<redis::Args> reads;
  for (const auto& group : groups_) reads.push_back(read_new_command(group, std::nullopt));
  std::vector<Entry> entries = entries_of_reads(reads);
  if (!entries.empty() || o_.drain) return entries;
  const auto& group = groups_[next_wait_++ % groups_.size()];
  return entries_of_read(
      group_command(read_new_command(group, std::min<Millis>(o_.block, kSliceWait))));
}

bool StreamReader::send_read_ahead() {
  try {
    if (ahead_broken_ || !ahead_.connected()) {
      ahead_.reconnect();
      ahead_broken_ = false;
    }
    ahead_.send({read_new_command(groups_.front(), std::nullopt)});
  } catch (const Error& e) {
    if (e.backend() == Backend::none) throw;
    ahead_broken_ = true;
    spdlog::debug("ingest: no read ahead: {}", e.what());
    return false;  // nothing was read: the next turn reads as usual
  }
  reading_ahead_ = true;
  return true;
}

std::vector<Entry> StreamReader::receive_read_ahead() {
  reading_ahead_ = false;
  redis::Reply r = ahead_.receive();
  r.checked();
  observer_.redis_round_trip();
  return entries_of_read(std::move(r));
}

void StreamReader::read_ahead_failed() {
  reading_ahead_ = false;
  ahead_broken_ = true;
}

void StreamReader::drop_read_ahead() {
  if (reading_ahead_) ahead_broken_ = true;
  reading_ahead_ = false;
}

std::set<std::string> StreamReader::still_ours(const std::vector<std::string>& ids,
                                               Millis min_idle) {
  const StreamNames& s = streams_.at(0);  // read ahead: one stream
  std::set<std::string> kept;
  for (std::string& id :
       hot::parse_claimed_ids(group_command(hot::claim_ids(ref(s), o_.consumer, min_idle, ids)))) {
    kept.insert(std::move(id));
  }
  return kept;
}

// Not here, nor at another (perhaps dead) consumer whose entries become ours once idle for
// reclaim_idle.
bool StreamReader::nothing_pending() {
  return std::all_of(streams_.begin(), streams_.end(), [this](const StreamNames& s) {
    return hot::parse_pending_count(group_command(hot::pending_summary(ref(s)))) == 0;
  });
}

std::string StreamReader::pending_count(const StreamNames& s) {
  try {
    const redis::Reply r = redis_.command(hot::pending_summary(ref(s)));
    return r.is_error() ? "unknown (" + r.str + ")" : std::to_string(hot::parse_pending_count(r));
  } catch (const Error& e) {
    if (e.backend() == Backend::none) throw;
    return "unknown (" + std::string(e.what()) + ")";
  }
}

}  // namespace bk::lifecycle::consumer
