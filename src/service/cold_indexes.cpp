// The process-wide cache of cold indexes: least recently used dropped first, loads asked for
// by reads and done by a loader (serve's), failures not asked again at once.
#include "service/cold_index.h"

namespace bk::service {

std::shared_ptr<const ColdIndex> ColdIndexes::find(const PeriodRef& ref, const std::string& meta,
                                                   const std::string& spill_gen) {
  const std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = entries_.find(meta); it != entries_.end()) {
    const std::string& kept = it->second.index->spill_gen();
    if (kept == spill_gen) {
      lru_.splice(lru_.begin(), lru_, it->second.used);
      ++stats_.hits;
      return it->second.index;
    }
    if (older_generation(spill_gen, kept)) {  // a read that began before: it reads again
      ++stats_.misses;
      return nullptr;
    }
    drop(it);  // the period spilled again: that generation is never read again
  }
  ++stats_.misses;
  ask(ref, meta, spill_gen);
  return nullptr;
}

bool ColdIndexes::has(const std::string& meta, const std::string& spill_gen) const {
  const std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(meta);
  return it != entries_.end() && it->second.index->spill_gen() == spill_gen;
}

void ColdIndexes::ask(const PeriodRef& ref, const std::string& meta, const std::string& spill_gen) {
  if (const auto r = refused_.find(meta); r != refused_.end()) {
    if (r->second.spill_gen == spill_gen && std::chrono::steady_clock::now() < r->second.until) {
      return;
    }
    refused_.erase(r);
  }
  auto& asked = wanted_gen_[meta];
  if (asked == spill_gen) return;
  const bool queued = !asked.empty();
  asked = spill_gen;
  if (!queued) {
    wanted_.emplace_back(meta, ref);
    wake_.notify_one();
  }
}

std::optional<PeriodRef> ColdIndexes::next(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_for(lock, wait, [this] { return stopped_ || !wanted_.empty(); });
  if (stopped_ || wanted_.empty()) return std::nullopt;
  auto [meta, ref] = std::move(wanted_.front());
  wanted_.pop_front();
  // Taken: from now on a read may ask for it again, whatever becomes of this load.
  wanted_gen_.erase(meta);
  return ref;
}

bool ColdIndexes::stopped() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return stopped_;
}

void ColdIndexes::install(const std::string& meta, std::shared_ptr<const ColdIndex> index) {
  const std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = entries_.find(meta); it != entries_.end()) drop(it);
  const std::size_t size = index->bytes();
  while (!lru_.empty() && stats_.bytes + size > budget_) {
    drop(entries_.find(lru_.back()));
    ++stats_.evictions;
  }
  lru_.push_front(meta);
  entries_[meta] = Entry{std::move(index), lru_.begin()};
  stats_.bytes += size;
  ++stats_.loads;
}

void ColdIndexes::not_loaded(const std::string& meta, const std::string& spill_gen,
                             Outcome outcome) {
  const std::lock_guard<std::mutex> lock(mu_);
  if (outcome == Outcome::nothing) return;
  // Periods come and go: the record of old ones' refusals is not kept for ever.
  if (refused_.size() >= kMaxRefused) refused_.clear();
  using Clock = std::chrono::steady_clock;
  refused_[meta] = {spill_gen,
                    outcome == Outcome::too_large
                        ? Clock::time_point::max()
                        : Clock::now() + std::chrono::duration_cast<Clock::duration>(kRetryAfter)};
  if (outcome == Outcome::failed) ++stats_.failures;
}

void ColdIndexes::drop(std::unordered_map<std::string, Entry>::iterator it) {
  stats_.bytes -= it->second.index->bytes();
  lru_.erase(it->second.used);
  entries_.erase(it);
}

void ColdIndexes::stop() {
  const std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  wake_.notify_all();
}

ColdIndexes::Stats ColdIndexes::stats() const {
  const std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.periods = entries_.size();
  return s;
}

}  // namespace bk::service
