// check-config: the config loaded (so it is valid); show what each board will do.
#include <iostream>

#include "cli/commands.h"
#include "core/duration.h"

namespace bk::cli {

int check_config(Context& ctx) {
  const Config& c = ctx.config();
  std::cout << c.path << ": OK, " << c.boards.size() << " board entr"
            << (c.boards.size() == 1 ? "y" : "ies") << "\n";
  for (const BoardConfig& b : c.boards) {
    std::cout << "  " << b.pattern << " (" << b.timezone << ", hot_keep " << b.hot_keep
              << ", grace " << format_duration(b.grace) << ")\n";
    for (const PeriodSpec& p : b.periods) {
      const ScoreLayout l = b.layout_for(p);
      const auto kept = c.history.retention_for(p.name);
      std::cout << "    " << p.name << (p.cron ? " (cron \"" + p.cron->text() + "\")" : "")
                << ": score uses " << bits_needed(l) << " of 53 bits, retention "
                << format_duration(b.retention_for(p)) << ", history kept "
                << (kept ? format_duration(*kept) : std::string("forever")) << "\n";
    }
    std::string tiers;
    for (const TierRule& t : b.tiers) {
      tiers += (tiers.empty() ? "" : ", ") + t.name + " (" + describe_criterion(t) + ")";
    }
    if (!tiers.empty()) std::cout << "    tiers, first match wins: " << tiers << "\n";
  }
  return 0;
}

}  // namespace bk::cli
