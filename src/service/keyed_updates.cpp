// Updates with idempotency keys (Update::fingerprint): each key is claimed for its request's
// fingerprint before the update is applied, so that a key reused by another request is
// refused, and a retry of the same request goes on to the update path, which applies it or
// finds its event id (a duplicate). A key is claimed only by an update that passed
// validation: one refused before any server is asked binds nothing, and may be corrected and
// sent again with its key.
#include <map>
#include <optional>
#include <set>

#include "core/json.h"
#include "service/leaderboards.h"
#include "service/leaderboards_units.h"

namespace bk::service {

std::vector<UpdateResult> Leaderboards::apply_keyed(const std::vector<Update>& updates,
                                                    Detail detail) {
  std::vector<hot::ClaimBatch> batches;
  std::vector<std::vector<std::size_t>> claimants;  // per batch: the updates' indexes
  std::map<std::string, std::size_t> batch_of;      // board -> its batch
  const Instant at = now();
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const Update& u = updates[i];
    Updates::Planned plan;
    if (u.fingerprint.empty() || u.event_id.empty() || updates_->updates.plan(u, plan)) continue;
    const auto [it, fresh] = batch_of.try_emplace(u.board, batches.size());
    if (fresh) {
      batches.push_back({u.board, plan.config->dedupe_window, at, {}});
      claimants.emplace_back();
    }
    batches[it->second].keys.emplace_back(u.event_id, u.fingerprint);
    claimants[it->second].push_back(i);
  }
  const std::vector<hot::Claimed> claimed = updates_->idempotency.claim(redis_, batches);
  std::vector<std::optional<UpdateResult>> decided(updates.size());
  for (std::size_t b = 0; b < batches.size(); ++b) {
    for (std::size_t k = 0; k < claimants[b].size(); ++k) {
      const std::size_t i = claimants[b][k];
      const std::string whose =
          "board " + quoted(updates[i].board) + " event id " + quoted(updates[i].event_id);
      if (!claimed[b].error.empty()) {
        decided[i] =
            UpdateResult{UpdateStatus::failed,
                         Refusal::none,
                         whose + ": Redis refused the idempotency key's claim: " + claimed[b].error,
                         {}};
      } else if (claimed[b].claims[k] == hot::Claim::reused) {
        decided[i] = UpdateResult{UpdateStatus::refused,
                                  Refusal::key_reused,
                                  whose +
                                      ": the key was sent with another request within the "
                                      "board's dedupe_window; a new request needs a new key",
                                  {}};
      }
    }
  }
  std::vector<Update> rest;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < updates.size(); ++i) {
    if (decided[i]) continue;
    rest.push_back(updates[i]);
    where.push_back(i);
  }
  std::vector<UpdateResult> applied = apply(prepare(rest, detail));
  std::vector<UpdateResult> results(updates.size());
  for (std::size_t i = 0; i < updates.size(); ++i) {
    if (decided[i]) results[i] = std::move(*decided[i]);
  }
  for (std::size_t k = 0; k < where.size(); ++k) results[where[k]] = std::move(applied[k]);
  return results;
}

bool Leaderboards::claim_batch(const std::string& key, const std::string& fingerprint,
                               const std::vector<std::string>& boards) {
  std::vector<hot::ClaimBatch> batches;
  std::set<std::string> seen;
  for (const std::string& board : boards) {
    const BoardConfig* c = config_.board_for(board);
    if (c == nullptr || !seen.insert(board).second) continue;
    // "\x1f" cannot start a key sent in a header (printable ASCII): no event id of the
    // Idempotency-Key header is taken for a batch's key.
    batches.push_back({board,
                       c->dedupe_window,
                       now(),
                       {{"\x1f"
                         "batch " +
                             key,
                         fingerprint}}});
  }
  for (const hot::Claimed& c : updates_->idempotency.claim(redis_, batches)) {
    if (!c.error.empty()) throw Error("Redis refused a batch's idempotency key: " + c.error);
    if (c.claims.front() == hot::Claim::reused) return false;
  }
  return true;
}

}  // namespace bk::service
