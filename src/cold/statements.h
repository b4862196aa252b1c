// Prepared statements as tables of name -> SQL, one table per concern (spill rows, counted
// pages, reads, profiles, history); each connection registers its tables when it connects.
#pragma once
#include <string>
#include <vector>

namespace bk::cold {

struct Statement {
  std::string name;  // "bk_cold_..."
  std::string sql;   // parameters $1..$n
};
using StatementTable = std::vector<Statement>;

// Each takes the schema quoted as an identifier and is defined beside the code that runs its
// statements.
StatementTable spill_statements(const std::string& q);       // cold_tier.cpp
StatementTable page_statements(const std::string& q);        // pages.cpp
StatementTable reader_statements(const std::string& q);      // cold_reader.cpp
StatementTable profile_statements(const std::string& q);     // profile_store.cpp
StatementTable reset_statements(const std::string& q);       // board_reset.cpp (reset, drop)
StatementTable bans_statements(const std::string& q);        // bans.cpp
StatementTable member_row_statements(const std::string& q);  // member_rows.cpp
StatementTable erasure_statements(const std::string& q);     // erasure.cpp
StatementTable closes_statements(const std::string& q);      // closes.cpp

// Every table above, in one: what a ColdStore's connection prepares.
StatementTable cold_store_statements(const std::string& q);

// What a History's connection prepares ("bk_archive_..."; history.cpp).
StatementTable history_statements(const std::string& q);

// The SQL of the WHERE clause every per-period statement shares ($1 board, $2 period,
// $3 period id), with a space on either side.
inline const std::string kInPeriod = " board = $1 AND period = $2 AND period_id = $3 ";

}  // namespace bk::cold
