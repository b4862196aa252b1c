// In-memory tiers for the service's server-free tests: FakeRedis answers as the read scripts
// do (see each script's header: the `spilled` answers, cold_bound, the stale set, ranks), and
// FakePostgres keeps cold rows in listing order and profiles, and can be made unreachable.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cold/error.h"
#include "service/tiers.h"

namespace bk::service::testing {

// One period in Redis: its live members, meta and stale set.
struct FakePeriod {
  std::vector<ScoredMember> live;  // any order; kept sorted by listing order
  bool spilled = false;
  std::optional<std::int64_t> cold_bound;
  std::string gen = "0:0";
  std::set<std::string> stale;
};

class FakeRedis final : public HotTier {
 public:
  std::map<std::string, FakePeriod> periods;  // by live key
  // Profile hashes by board key (names()/metadata()); "" is the marker field.
  std::map<std::string, std::map<std::string, std::string>> hashes;
  int profile_reads = 0;
  int state_reads = 0;  // read_state calls (a count of the period's members is one)
  std::map<std::string, hot::ProfileWrites> written;  // by board, as asked to write
  std::map<std::string, std::string> refuse;          // board -> why its hashes are refused

  FakePeriod& period(const hot::PeriodKeys& keys) { return periods[keys.live]; }

  hot::HotRead<std::vector<hot::Listed>> range(const hot::PeriodKeys& keys, std::int64_t offset,
                                               std::int64_t count) override {
    const FakePeriod& p = sorted(keys);
    if (p.spilled && !p.cold_bound) return {true, {}};
    const auto entries = part(p, offset, count);
    if (p.spilled && (static_cast<std::int64_t>(entries.size()) < count ||
                      entries.back().encoded >= *p.cold_bound)) {
      return {true, {}};
    }
    return {false, listed(p, entries, offset)};
  }

  hot::HotRead<std::vector<hot::Listed>> around(const hot::PeriodKeys& keys,
                                                const std::string& member,
                                                std::int64_t k) override {
    const FakePeriod& p = sorted(keys);
    if (p.spilled && !p.cold_bound) return {true, {}};
    const auto pos = position(p, member);
    if (!pos) return {p.spilled, {}};
    const std::int64_t from = std::max<std::int64_t>(0, *pos - k);
    const auto entries = part(p, from, *pos + k - from + 1);
    if (p.spilled && (static_cast<std::int64_t>(entries.size()) < *pos + k - from + 1 ||
                      entries.back().encoded >= *p.cold_bound)) {
      return {true, {}};
    }
    return {false, listed(p, entries, from)};
  }

  hot::HotRead<std::optional<hot::Listed>> member(const hot::PeriodKeys& keys,
                                                  const std::string& member) override {
    const FakePeriod& p = sorted(keys);
    const auto score = score_of(p, member);
    if (p.spilled && !(score && p.cold_bound && *score < *p.cold_bound)) return {true, {}};
    if (!score) return {};
    return {false, hot::Listed{member, *score, better(p, *score) + 1}};
  }

  hot::ReadState read_state(const hot::PeriodKeys& keys, const std::string& member,
                            std::int64_t head, const hot::BoardKeys* profiles) override {
    ++state_reads;
    const FakePeriod& p = sorted(keys);
    hot::ReadState st;
    st.gen = p.gen;
    st.spilled = p.spilled;
    if (p.spilled) st.cold_bound = p.cold_bound;
    if (!member.empty()) st.member_score = score_of(p, member);
    st.size = static_cast<std::int64_t>(p.live.size());
    // Every member of the stale set, as read_state.lua answers: hot ones (their cold rows
    // are outdated) and tombstones (removed members: their cold rows are void).
    for (const std::string& s : p.stale) st.hot_and_stale.push_back(s);
    st.head = part(p, 0, head);
    if (profiles != nullptr && head > 0) st.head_profiles = listed_profiles(*profiles, st.head);
    return st;
  }

  // The profiles of `listed` in Redis, as the read scripts return them.
  hot::ListedProfiles listed_profiles(const hot::BoardKeys& board,
                                      const std::vector<ScoredMember>& listed) {
    hot::ListedProfiles out;
    out.names_moved = hashes[board.names()].count("") != 0;
    out.metadata_moved = hashes[board.metadata()].count("") != 0;
    for (const ScoredMember& m : listed) {
      out.names.push_back(field(board.names(), m.member));
      out.metadata.push_back(field(board.metadata(), m.member));
    }
    return out;
  }

  hot::Neighbours neighbours(const hot::PeriodKeys& keys, std::int64_t encoded,
                             const std::string& member, std::int64_t k) override {
    const FakePeriod& p = sorted(keys);
    const ScoredMember at{member, encoded};
    hot::Neighbours n{p.gen, 0, {}, {}};
    for (const ScoredMember& m : p.live) {
      if (listed_before(m, at)) {
        ++n.count_before;
        n.before.insert(n.before.begin(), m);  // nearest first
      } else if (listed_before(at, m) && static_cast<std::int64_t>(n.after.size()) < k) {
        n.after.push_back(m);
      }
    }
    if (static_cast<std::int64_t>(n.before.size()) > k)
      n.before.resize(static_cast<std::size_t>(k));
    return n;
  }

  hot::AfterKey after(const hot::PeriodKeys& keys, std::int64_t encoded, const std::string& member,
                      std::int64_t count, const hot::BoardKeys* profiles) override {
    const FakePeriod& p = sorted(keys);
    const ScoredMember key{member, encoded};
    hot::AfterKey out;
    out.gen = p.gen;
    out.size = static_cast<std::int64_t>(p.live.size());
    out.spilled = p.spilled;
    for (const ScoredMember& m : p.live) {
      if (!listed_before(key, m)) ++out.through;
      if (m.encoded < encoded) ++out.better;
    }
    out.after = part(p, out.through, count);
    out.cold = p.spilled && (!p.cold_bound || static_cast<std::int64_t>(out.after.size()) < count ||
                             out.after.back().encoded >= *p.cold_bound);
    if (out.cold) out.hot_and_stale = read_state(keys, "", 0, nullptr).hot_and_stale;
    if (profiles != nullptr) out.profiles = listed_profiles(*profiles, out.after);
    return out;
  }

  std::string generation(const hot::PeriodKeys& keys) override { return period(keys).gen; }

  std::int64_t size(const hot::PeriodKeys& keys) override {
    return static_cast<std::int64_t>(period(keys).live.size());
  }

  std::vector<std::optional<std::int64_t>> scores(
      const hot::PeriodKeys& keys, const std::vector<std::string>& members) override {
    std::vector<std::optional<std::int64_t>> out;
    for (const std::string& m : members) out.push_back(score_of(period(keys), m));
    return out;
  }

  std::int64_t count_better(const hot::PeriodKeys& keys, std::int64_t encoded) override {
    return better(period(keys), encoded);
  }

  std::vector<std::int64_t> count_better(const hot::PeriodKeys& keys,
                                         const std::vector<std::int64_t>& encoded) override {
    std::vector<std::int64_t> out;
    for (const std::int64_t e : encoded) out.push_back(better(period(keys), e));
    return out;
  }

  std::vector<ScoredMember> slice(const hot::PeriodKeys& keys, std::int64_t start,
                                  std::int64_t count) override {
    return part(sorted(keys), start, count);
  }

  std::vector<hot::LivePeriod> live_periods(const hot::BoardKeys&) override { return {}; }

  std::set<std::string> held_boards;  // what known_boards() answers
  std::vector<std::string> known_boards(const std::string&) override {
    return {held_boards.rbegin(), held_boards.rend()};  // no particular order: not the listing's
  }

  hot::StoredProfiles read_profiles(const hot::BoardKeys& board,
                                    const std::vector<std::string>& members) override {
    ++profile_reads;
    hot::StoredProfiles out;
    out.names_moved = hashes[board.names()].count("") != 0;
    out.metadata_moved = hashes[board.metadata()].count("") != 0;
    for (const std::string& m : members) {
      out.names.push_back(field(board.names(), m));
      out.metadata.push_back(field(board.metadata(), m));
    }
    return out;
  }

  std::map<std::string, std::string> write_profiles(
      const std::map<std::string, hot::ProfileWrites>& boards) override {
    std::map<std::string, std::string> refused;
    for (const auto& [board, writes] : boards) {
      if (const auto it = refuse.find(board); it != refuse.end()) {
        refused.insert(*it);
        continue;
      }
      written[board] = writes;
    }
    return refused;
  }

 private:
  FakePeriod& sorted(const hot::PeriodKeys& keys) {
    FakePeriod& p = period(keys);
    std::sort(p.live.begin(), p.live.end(), listed_before);
    return p;
  }
  static std::vector<ScoredMember> part(const FakePeriod& p, std::int64_t from, std::int64_t n) {
    const auto size = static_cast<std::int64_t>(p.live.size());
    if (n <= 0 || from >= size) return {};
    return {p.live.begin() + from, p.live.begin() + std::min(size, from + n)};
  }
  static std::optional<std::int64_t> score_of(const FakePeriod& p, const std::string& member) {
    for (const ScoredMember& m : p.live) {
      if (m.member == member) return m.encoded;
    }
    return std::nullopt;
  }
  static std::optional<std::int64_t> position(const FakePeriod& p, const std::string& member) {
    for (std::size_t i = 0; i < p.live.size(); ++i) {
      if (p.live[i].member == member) return static_cast<std::int64_t>(i);
    }
    return std::nullopt;
  }
  static std::int64_t better(const FakePeriod& p, std::int64_t encoded) {
    return std::count_if(p.live.begin(), p.live.end(),
                         [&](const ScoredMember& m) { return m.encoded < encoded; });
  }
  static std::vector<hot::Listed> listed(const FakePeriod& p,
                                         const std::vector<ScoredMember>& entries,
                                         std::int64_t from) {
    std::vector<hot::Listed> out;
    if (entries.empty()) return out;
    const auto ranks =
        competition_ranks(entries, SliceStart{from, better(p, entries.front().encoded) + 1});
    for (std::size_t i = 0; i < entries.size(); ++i)
      out.push_back({entries[i].member, entries[i].encoded, ranks[i]});
    return out;
  }
  std::optional<std::string> field(const std::string& hash, const std::string& member) {
    const auto& h = hashes[hash];
    const auto it = h.find(member);
    return it == h.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

// Cold rows and profiles; `reachable` false: every call throws as an unreachable server does.
class FakePostgres final : public ColdTier {
 public:
  std::map<std::string, std::vector<cold::ColdHit>> rows;          // by "board period id"
  std::map<std::string, std::vector<cold::Profile>> profile_rows;  // by board
  bool reachable = true;
  int profile_reads = 0;
  int snapshots = 0;  // cold snapshots taken (a transaction each on PostgreSQL)
  int counts = 0;     // periods' cold rows counted (a statement each)

  static std::string name(const cold::PeriodKey& k) {
    return k.board + " " + k.period + " " + k.period_id;
  }

  bool present() const override { return true; }

  std::unique_ptr<ColdSnapshot> snapshot() override {
    check();
    ++snapshots;
    return std::make_unique<Snapshot>(*this);
  }

  std::vector<cold::Profile> profiles(const std::string& board,
                                      const std::vector<std::string>& members) override {
    check();
    ++profile_reads;
    std::vector<cold::Profile> out;
    for (const cold::Profile& p : profile_rows[board]) {
      if (std::find(members.begin(), members.end(), p.member) != members.end()) out.push_back(p);
    }
    return out;
  }

 private:
  void check() const {
    if (!reachable) throw cold::PostgresUnavailable("connection refused (a test)");
  }

  class Snapshot final : public ColdSnapshot {
   public:
    explicit Snapshot(FakePostgres& db) : db_(db) {}
    std::int64_t count(const cold::PeriodKey& p) override {
      ++db_.counts;
      return static_cast<std::int64_t>(of(p).size());
    }
    std::int64_t count_better(const cold::PeriodKey& p, std::int64_t e) override {
      const auto& r = of(p);
      return std::count_if(r.begin(), r.end(),
                           [&](const cold::ColdHit& h) { return h.encoded < e; });
    }
    std::vector<std::int64_t> count_better(const cold::PeriodKey& p,
                                           const std::vector<std::int64_t>& e) override {
      std::vector<std::int64_t> out;
      for (const std::int64_t x : e) out.push_back(count_better(p, x));
      return out;
    }
    std::int64_t count_before(const cold::PeriodKey& p, std::int64_t e,
                              const std::string& m) override {
      const auto& r = of(p);
      return std::count_if(r.begin(), r.end(), [&](const cold::ColdHit& h) {
        return listed_before({h.member, h.encoded}, {m, e});
      });
    }
    std::vector<cold::ColdHit> slice(const cold::PeriodKey& p, std::int64_t offset,
                                     std::int64_t limit) override {
      const auto& r = of(p);
      const auto size = static_cast<std::int64_t>(r.size());
      if (offset >= size) return {};
      return {r.begin() + offset, r.begin() + std::min(size, offset + limit)};
    }
    std::optional<std::pair<std::int64_t, std::string>> key_at(const cold::PeriodKey& p,
                                                               std::int64_t position) override {
      const auto& r = of(p);
      if (position >= static_cast<std::int64_t>(r.size())) return std::nullopt;
      const auto& h = r[static_cast<std::size_t>(position)];
      return std::pair{h.encoded, h.member};
    }
    std::vector<cold::ColdHit> from(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                    std::int64_t limit) override {
      return where(p, limit, [&](const cold::ColdHit& h) {
        return !listed_before({h.member, h.encoded}, {m, e});
      });
    }
    std::vector<cold::ColdHit> after(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                     std::int64_t limit) override {
      return where(p, limit, [&](const cold::ColdHit& h) {
        return listed_before({m, e}, {h.member, h.encoded});
      });
    }
    std::vector<cold::ColdHit> before(const cold::PeriodKey& p, std::int64_t e,
                                      const std::string& m, std::int64_t limit) override {
      std::vector<cold::ColdHit> out;
      const auto& r = of(p);
      for (auto it = r.rbegin(); it != r.rend(); ++it) {
        if (static_cast<std::int64_t>(out.size()) >= limit) break;
        if (listed_before({it->member, it->encoded}, {m, e})) out.push_back(*it);
      }
      return out;
    }
    std::vector<cold::ColdHit> rows_for(const cold::PeriodKey& p,
                                        const std::vector<std::string>& members) override {
      return where(p, static_cast<std::int64_t>(of(p).size()), [&](const cold::ColdHit& h) {
        return std::find(members.begin(), members.end(), h.member) != members.end();
      });
    }

   private:
    FakePostgres& db_;
    std::vector<cold::ColdHit>& of(const cold::PeriodKey& p) {
      auto& r = db_.rows[name(p)];
      std::sort(r.begin(), r.end(), [](const cold::ColdHit& a, const cold::ColdHit& b) {
        return listed_before({a.member, a.encoded}, {b.member, b.encoded});
      });
      return r;
    }
    template <class Keep>
    std::vector<cold::ColdHit> where(const cold::PeriodKey& p, std::int64_t limit, Keep keep) {
      std::vector<cold::ColdHit> out;
      for (const auto& h : of(p)) {
        if (static_cast<std::int64_t>(out.size()) >= limit) break;
        if (keep(h)) out.push_back(h);
      }
      return out;
    }
  };
};

}  // namespace bk::service::testing
