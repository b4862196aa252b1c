// migrate: create or upgrade the PostgreSQL schema; safe to run again and from two places.
#include <iostream>

#include "cli/commands.h"

namespace bk::cli {

int migrate(Context& ctx) {
  cold::ColdStore& cold = ctx.schema_admin();  // no rows: no deployment check
  const int applied = cold.migrate();
  std::cout << "schema " << ctx.config().postgres.schema << " at version " << cold.schema_version()
            << " (" << applied << " migration" << (applied == 1 ? "" : "s") << " applied now)\n";
  return 0;
}

}  // namespace bk::cli
