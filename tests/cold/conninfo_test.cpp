// PostgreSQL connection strings read by libpq's PQconninfoParse; no server needed.
#include "cold/conninfo.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/redact.h"

namespace bk::cold {
namespace {

TEST(Conninfo, WhereComesFromWhatLibpqRead) {
  EXPECT_EQ(parse_conninfo("postgresql://bk:pw@db.internal:6432/boards").where,
            "postgresql at db.internal:6432/boards");
  EXPECT_EQ(parse_conninfo("postgres://bk@[::1]:5433/boards").where,
            "postgresql at [::1]:5433/boards");
  EXPECT_EQ(parse_conninfo("host=::1,h port=1,2 dbname=x").where, "postgresql at [::1],h:1,2/x");
  EXPECT_EQ(parse_conninfo("postgresql:///boards?host=%2Fvar%2Frun%2Fpostgresql").where,
            "postgresql at /var/run/postgresql/boards");
  EXPECT_EQ(parse_conninfo("postgresql://h1:1,h2:2/x").where, "postgresql at h1,h2:1,2/x");
  EXPECT_EQ(parse_conninfo("host=db port=7 dbname=b password='x y'").where, "postgresql at db:7/b");
  EXPECT_EQ(parse_conninfo("postgresql://").where, "postgresql at (default host)/");
}

TEST(Conninfo, DefaultsAreAddedUnlessSet) {
  const std::string plain = parse_conninfo("postgresql://bk@h/db").conninfo;
  EXPECT_NE(plain.find("connect_timeout='5'"), std::string::npos) << plain;
  EXPECT_NE(plain.find("client_encoding='UTF8'"), std::string::npos) << plain;
  const std::string set =
      parse_conninfo("postgresql://bk@h/db?connect_timeout=3&client_encoding=LATIN1").conninfo;
  EXPECT_NE(set.find("connect_timeout='3'"), std::string::npos) << set;
  EXPECT_EQ(set.find("connect_timeout='5'"), std::string::npos) << set;
  EXPECT_EQ(set.find("UTF8"), std::string::npos) << set;
  // A password or database that merely mentions a parameter's name does not count as setting it.
  const std::string mention =
      parse_conninfo("postgresql://bk:connect_timeout@h/client_encoding").conninfo;
  EXPECT_NE(mention.find("connect_timeout='5'"), std::string::npos) << mention;
  EXPECT_NE(mention.find("client_encoding='UTF8'"), std::string::npos) << mention;
}

TEST(Conninfo, PasswordsAreKeptExactlyAndRegistered) {
  const std::string c = parse_conninfo("postgresql://bk:Cp1%2F%27%5C%2B?x@h/db").conninfo;
  EXPECT_NE(c.find(R"(password='Cp1/\'\\+?x')"), std::string::npos) << c;
  EXPECT_EQ(redact("Cp1/'\\+?x and Cp1%2F%27%5C%2B?x"), "*** and ***");
  parse_conninfo("host=h password='Cp2 a\\'b'");
  EXPECT_EQ(redact("Cp2 a'b"), "***");
}

std::string error_of(const std::string& url) {
  try {
    parse_conninfo(url);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << url << " parsed";
  return "";
}

TEST(Conninfo, RefusedStringsNameWhatIsWrongWithoutEchoingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"postgresql://bk:Cq1%4g@h/db", "bad percent-escape"},
      {"postgresql://bk:Cq1%@h/db", "bad percent-escape"},
      {"postgresql://bk:Cq1%zz@h/db", "bad percent-escape"},
      {"postgresql://bk:Cq1%00@h/db", "bad percent-escape"},
      {"postgresql://bk:Cq1pw@[::1:5432/db", "'[' of an IPv6 host is not closed"},
      {"postgresql://bk:Cq1pw@::1:5432/db", "IPv6 host must be in brackets"},
      {"postgresql://bk:Cq1pw@h/db?Cq1=x", "unknown query parameter"},
      {"postgresql://bk:Cq1pw@h/db?password", "not one name=value"},
      {"postgresql://bk:Cq1pw@h:Cq1/db", "bad port"},
      {"postgresql://bk:Cq1pw@h:65536/db", "bad port"},
      {"postgresql://bkuser:Cq1PGs3cret/pa/ss@127.0.0.1:59871/boards", "bad port"},
      {"postgresql://bk:Cq1@x@127.0.0.1:1/db", "a host holds an '@'"},
      {"host=h password=Cq1 pw", "has no '='"},
      {"host=h password='Cq1 pw", "quoted value is not closed"},
      {"host=h Cq1pw=x", "unknown connection parameter"},
      {"postgres:/bk:Cq1pw@h/db", "has no '='"},
  };
  for (const auto& [url, phrase] : cases) {
    const std::string m = error_of(url);
    EXPECT_NE(m.find(phrase), std::string::npos) << url << ": " << m;
    EXPECT_EQ(m.find("Cq1"), std::string::npos) << url << ": " << m;
    EXPECT_EQ(m.find('"'), std::string::npos) << url << ": " << m;  // nothing quoted
  }
  // A raw '/' or '@' in the password: a hint to percent-encode it.
  EXPECT_NE(error_of("postgresql://bkuser:Cq1/pa/ss@127.0.0.1:59871/boards").find("%2F"),
            std::string::npos);
}

}  // namespace
}  // namespace bk::cold
