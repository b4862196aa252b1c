// A period's cold rows in memory (one spill generation), and the snapshot that reads them.
#include "service/cold_index.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>

namespace bk::service {

std::string spill_generation(const std::string& gen) {
  const std::string spill = gen.substr(0, gen.find(':'));
  return spill == "0" ? std::string() : spill;
}

bool older_generation(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

ColdIndex::ColdIndex(cold::PeriodKey period, std::string spill_gen)
    : period_(std::move(period)), spill_gen_(std::move(spill_gen)) {}

void ColdIndex::reserve(std::size_t rows, std::size_t name_bytes) {
  encoded_.reserve(rows);
  name_end_.reserve(rows);
  names_.reserve(name_bytes);
}

void ColdIndex::add(const std::string& member, std::int64_t encoded) {
  if (!encoded_.empty()) {
    const std::int64_t last = encoded_.back();
    if (last > encoded || (last == encoded && this->member(size() - 1) >= member)) {
      throw std::logic_error("cold index of " + period_.board + ": rows out of listing order");
    }
  }
  if (names_.size() + member.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("cold index of " + period_.board + ": names beyond 4 GiB");
  }
  names_ += member;
  name_end_.push_back(static_cast<std::uint32_t>(names_.size()));
  encoded_.push_back(encoded);
}

void ColdIndex::seal() {
  by_name_.resize(encoded_.size());
  for (std::size_t i = 0; i < by_name_.size(); ++i) by_name_[i] = static_cast<std::uint32_t>(i);
  std::sort(by_name_.begin(), by_name_.end(),
            [this](std::uint32_t a, std::uint32_t b) { return member(a) < member(b); });
  encoded_.shrink_to_fit();
  name_end_.shrink_to_fit();
  names_.shrink_to_fit();
}

std::size_t ColdIndex::bytes() const {
  return sizeof(*this) + encoded_.capacity() * sizeof(std::int64_t) +
         name_end_.capacity() * sizeof(std::uint32_t) + names_.capacity() +
         by_name_.capacity() * sizeof(std::uint32_t);
}

std::string_view ColdIndex::member(std::int64_t i) const {
  const auto at = static_cast<std::size_t>(i);
  const std::uint32_t begin = at == 0 ? 0 : name_end_[at - 1];
  return std::string_view(names_).substr(begin, name_end_[at] - begin);
}

std::int64_t ColdIndex::count_better(std::int64_t e) const {
  return std::lower_bound(encoded_.begin(), encoded_.end(), e) - encoded_.begin();
}

std::int64_t ColdIndex::position(std::int64_t e, std::string_view m) const {
  // Among the rows of score e, those whose member sorts before m (bytes, as COLLATE "C").
  std::int64_t lo = count_better(e);
  std::int64_t hi = std::upper_bound(encoded_.begin(), encoded_.end(), e) - encoded_.begin();
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (member(mid) < m) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

std::optional<std::int64_t> ColdIndex::find(std::string_view m) const {
  const auto it = std::lower_bound(
      by_name_.begin(), by_name_.end(), m,
      [this](std::uint32_t at, std::string_view name) { return member(at) < name; });
  if (it == by_name_.end() || member(*it) != m) return std::nullopt;
  return static_cast<std::int64_t>(*it);
}

namespace {

class IndexedSnapshot final : public ColdSnapshot {
 public:
  explicit IndexedSnapshot(std::shared_ptr<const ColdIndex> index) : index_(std::move(index)) {}

  std::int64_t count(const cold::PeriodKey& p) override { return of(p).size(); }
  std::int64_t count_better(const cold::PeriodKey& p, std::int64_t e) override {
    return of(p).count_better(e);
  }
  std::vector<std::int64_t> count_better(const cold::PeriodKey& p,
                                         const std::vector<std::int64_t>& e) override {
    std::vector<std::int64_t> out;
    out.reserve(e.size());
    for (const std::int64_t x : e) out.push_back(of(p).count_better(x));
    return out;
  }
  std::int64_t count_before(const cold::PeriodKey& p, std::int64_t e,
                            const std::string& m) override {
    return of(p).position(e, m);
  }
  std::vector<cold::ColdHit> slice(const cold::PeriodKey& p, std::int64_t offset,
                                   std::int64_t limit) override {
    return forward(of(p), offset, limit);
  }
  std::optional<std::pair<std::int64_t, std::string>> key_at(const cold::PeriodKey& p,
                                                             std::int64_t position) override {
    const ColdIndex& x = of(p);
    if (position < 0 || position >= x.size()) return std::nullopt;
    return std::pair{x.encoded(position), std::string(x.member(position))};
  }
  std::vector<cold::ColdHit> from(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                  std::int64_t limit) override {
    return forward(of(p), of(p).position(e, m), limit);
  }
  std::vector<cold::ColdHit> after(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                   std::int64_t limit) override {
    const ColdIndex& x = of(p);
    std::int64_t at = x.position(e, m);
    if (at < x.size() && x.encoded(at) == e && x.member(at) == m) ++at;
    return forward(x, at, limit);
  }
  std::vector<cold::ColdHit> before(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                    std::int64_t limit) override {
    const ColdIndex& x = of(p);
    std::vector<cold::ColdHit> out;
    for (std::int64_t i = x.position(e, m) - 1; i >= 0 && out.size() < size(limit); --i) {
      out.push_back(hit(x, i));
    }
    return out;
  }
  std::vector<cold::ColdHit> rows_for(const cold::PeriodKey& p,
                                      const std::vector<std::string>& members) override {
    const ColdIndex& x = of(p);
    std::vector<std::int64_t> at;
    for (const std::string& m : members) {
      if (const auto i = x.find(m)) at.push_back(*i);
    }
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    std::vector<cold::ColdHit> out;
    out.reserve(at.size());
    for (const std::int64_t i : at) out.push_back(hit(x, i));
    return out;
  }

 private:
  std::shared_ptr<const ColdIndex> index_;

  // A limit below 0 reads nothing, as in SQL.
  static std::size_t size(std::int64_t limit) {
    return static_cast<std::size_t>(std::max<std::int64_t>(limit, 0));
  }
  static cold::ColdHit hit(const ColdIndex& x, std::int64_t i) {
    cold::ColdHit h;
    h.member = std::string(x.member(i));
    h.encoded = x.encoded(i);
    return h;
  }
  // Rows [from, from + limit), as SQL's OFFSET and LIMIT (a negative one counts as 0).
  static std::vector<cold::ColdHit> forward(const ColdIndex& x, std::int64_t from,
                                            std::int64_t limit) {
    std::vector<cold::ColdHit> out;
    from = std::max<std::int64_t>(from, 0);
    const std::int64_t end =
        std::min(x.size(), from + std::clamp<std::int64_t>(limit, 0, x.size()));
    for (std::int64_t i = from; i < end; ++i) out.push_back(hit(x, i));
    return out;
  }
  // An index holds one period: a read of another is a bug of the caller.
  const ColdIndex& of(const cold::PeriodKey& p) const {
    const cold::PeriodKey& own = index_->period();
    if (p.board != own.board || p.period != own.period || p.period_id != own.period_id) {
      throw std::logic_error("a cold index of " + own.board + " read for " + p.board);
    }
    return *index_;
  }
};

}  // namespace

std::unique_ptr<ColdSnapshot> snapshot_of(std::shared_ptr<const ColdIndex> index) {
  return std::make_unique<IndexedSnapshot>(std::move(index));
}

std::shared_ptr<ColdIndex> read_index(ColdSnapshot& reader, const cold::PeriodKey& period,
                                      const std::string& spill_gen, std::size_t max_bytes) {
  constexpr std::int64_t kPage = 20'000;
  // Names are addressed by 32-bit offsets: a period whose names take more is too large.
  max_bytes = std::min<std::size_t>(max_bytes, std::numeric_limits<std::uint32_t>::max());
  auto index = std::make_shared<ColdIndex>(period, spill_gen);
  const std::int64_t rows = reader.count(period);
  // Four bytes of hash slots a row at least, beside its score, offset and name.
  const auto fixed = static_cast<std::size_t>(rows) * (8 + 4 + 8);
  if (fixed > max_bytes) return nullptr;
  auto page = reader.slice(period, 0, kPage);
  std::size_t names = 0;
  for (const auto& h : page) names += h.member.size();
  if (!page.empty()) {
    const std::size_t guess = names / page.size() * static_cast<std::size_t>(rows);
    if (fixed + guess > max_bytes) return nullptr;
    index->reserve(static_cast<std::size_t>(rows), guess + guess / 8);
  }
  while (!page.empty()) {
    for (const auto& h : page) index->add(h.member, h.encoded);
    if (index->bytes() > max_bytes) return nullptr;
    if (static_cast<std::int64_t>(page.size()) < kPage) break;
    const cold::ColdHit last = page.back();
    page = reader.after(period, last.encoded, last.member, kPage);
  }
  index->seal();
  if (index->bytes() > max_bytes) return nullptr;
  return index;
}

}  // namespace bk::service
