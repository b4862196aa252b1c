// Applying a batch (see applier.h).
#include "lifecycle/consumer/applier.h"

#include <algorithm>

#include "lifecycle/stream_event.h"

namespace bk::lifecycle::consumer {
namespace {

// Points are not used here.
constexpr auto kStatusOnly = service::Leaderboards::Detail::status;

// The verdict of entry `i` from its update's result, counted in `batch` and `out`.
void judge(const service::UpdateResult& result, const std::string& board, std::size_t i, Batch& b,
           Applied& out, IngestStats& batch) {
  switch (result.status) {
    case service::UpdateStatus::applied:
      ++batch.applied;
      out.worked_now.insert(board);
      break;
    case service::UpdateStatus::duplicate:
      ++batch.duplicates;
      out.worked_now.insert(board);
      break;
    case service::UpdateStatus::failed:
      b.verdicts[i] = Verdict::hold;
      ++batch.board_failed;
      out.failed_now.emplace(board, result.reason);
      break;
    case service::UpdateStatus::refused:
      b.verdicts[i] = Verdict::dead_letter;
      b.reasons[i] = result.reason;
      b.labels[i] = service::refusal_label(result.refusal);
      break;
    case service::UpdateStatus::unavailable:
      b.verdicts[i] = Verdict::hold;
      if (out.cold_reason.empty()) out.cold_reason = result.reason;
      ++batch.unavailable;
      out.worked_now.insert(board);  // its keys answered; PostgreSQL did not
      break;
    case service::UpdateStatus::waiting:
      b.verdicts[i] = Verdict::hold;
      ++batch.waiting;
      out.worked_now.insert(board);
      break;
  }
}

}  // namespace

Batch parse_batch(std::vector<Entry> entries, const std::vector<StreamNames>& streams,
                  std::int64_t reclaimed, bool redelivered) {
  Batch b;
  b.entries = std::move(entries);
  b.reclaimed = reclaimed;
  const std::size_t n = b.entries.size();
  b.verdicts.assign(n, Verdict::acknowledge);
  b.reasons.resize(n);
  b.labels.resize(n);
  b.updates.reserve(n);
  b.index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (b.entries[i].deleted) continue;  // acknowledged: nothing left to apply
    const StreamNames& from = streams[b.entries[i].stream];
    StreamEvent event = parse_stream_event(b.entries[i].fields, b.entries[i].id,
                                           {from.key, from.qualifier, redelivered});
    if (!event.update) {
      b.verdicts[i] = Verdict::dead_letter;
      b.reasons[i] = malformed_reason(event.malformed);
      b.labels[i] = std::string(kMalformedLabel);
      continue;
    }
    b.updates.push_back(std::move(*event.update));
    b.index.push_back(i);
  }
  return b;
}

Applier::Applier(service::Leaderboards& boards, FailingBoards& failing, std::size_t streams)
    : boards_(boards), failing_(failing), streams_(streams) {}

void Applier::prepare(Batch& b) {
  b.prepared = boards_.prepare(b.updates, kStatusOnly);
}

Applied Applier::apply(Batch& b, const std::function<void()>& while_applying, IngestStats& batch) {
  const auto results = apply_batch(b, while_applying);
  Applied out;
  for (std::size_t k = 0; k < results.size(); ++k) {
    judge(results[k], b.updates[k].board, b.index[k], b, out, batch);
  }
  return out;
}

// The events of boards that fail and are not retried now stay pending without being sent:
// taken out of the batch (held), their members held on their boards (so that another
// consumer's later events of them wait too). A failing board is retried only by the
// entries of a pass that decided so at its start (see FailingBoards::start_pass).
void Applier::withhold_failing(Batch& b, bool own_pass, IngestStats& batch) {
  const auto withheld = [&](const service::Update& u) {
    return failing_.withheld(u.board, own_pass);
  };
  if (std::none_of(b.updates.begin(), b.updates.end(), withheld)) return;
  std::vector<service::Update> kept, held;
  std::vector<std::size_t> index;
  for (std::size_t k = 0; k < b.updates.size(); ++k) {
    if (!withheld(b.updates[k])) {
      kept.push_back(std::move(b.updates[k]));
      index.push_back(b.index[k]);
      continue;
    }
    b.verdicts[b.index[k]] = Verdict::hold;
    failing_.waited(b.updates[k].board);
    ++batch.board_failed;
    held.push_back(std::move(b.updates[k]));
  }
  b.updates = std::move(kept);
  b.index = std::move(index);
  b.prepared.reset();  // planned with the updates as they were
  boards_.hold(held);
}

// The batch's updates; `while_applying` set: a read was sent ahead, finished while the
// batch's script calls run (one stream only).
std::vector<service::UpdateResult> Applier::apply_batch(
    Batch& b, const std::function<void()>& while_applying) {
  if (!while_applying && !b.prepared) return apply_per_stream(b.updates);
  if (!b.prepared) prepare(b);
  service::Leaderboards::Prepared prepared = std::move(*b.prepared);
  b.prepared.reset();
  if (!while_applying) return boards_.apply(std::move(prepared));
  auto results = boards_.apply(std::move(prepared), while_applying);
  while_applying();  // a no-op: the service ran it (kept so a reply is never left unread)
  return results;
}

// The updates of each stream in one call (the service takes one stream's entries per board
// and call; the order between streams is not kept anyway), results in order.
std::vector<service::UpdateResult> Applier::apply_per_stream(
    const std::vector<service::Update>& updates) {
  if (streams_ == 1) return boards_.apply(updates, kStatusOnly);
  std::map<std::string, std::vector<std::size_t>> of_stream;
  for (std::size_t k = 0; k < updates.size(); ++k) of_stream[updates[k].stream].push_back(k);
  std::vector<service::UpdateResult> results(updates.size());
  for (const auto& [stream, ks] : of_stream) {
    std::vector<service::Update> part;
    part.reserve(ks.size());
    for (const std::size_t k : ks) part.push_back(updates[k]);
    auto got = boards_.apply(part, kStatusOnly);
    for (std::size_t j = 0; j < ks.size(); ++j) results[ks[j]] = std::move(got[j]);
  }
  return results;
}

}  // namespace bk::lifecycle::consumer
