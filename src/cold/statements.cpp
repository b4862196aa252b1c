// The cold store's statement tables joined into one (see statements.h).
#include "cold/statements.h"

#include <iterator>

namespace bk::cold {

StatementTable cold_store_statements(const std::string& q) {
  StatementTable all;
  for (StatementTable part :
       {spill_statements(q), page_statements(q), reader_statements(q), profile_statements(q),
        reset_statements(q), bans_statements(q), member_row_statements(q), erasure_statements(q),
        closes_statements(q)}) {
    all.insert(all.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  return all;
}

}  // namespace bk::cold
