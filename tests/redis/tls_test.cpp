// TLS against real TLS-only redis-servers (no plain port) with certificates made by openssl
// when tests/run.sh starts (deploy/local/setup.sh: bk_test_certs, bk_start_redis_tls): a
// verified connection that carries commands, pipelines, timeouts and closes as plain TCP
// does; a wrong CA, an expired certificate, a wrong name and a missing client certificate
// refused at connect with OpenSSL's reason (exit 3); mutual TLS; the system store by
// default; the cluster's nodes over TLS; and the command line end to end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "harness.h"
#include "redis/connection.h"
#include "redis/error.h"

namespace bk::redis {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    ADD_FAILURE() << name << " is not set: run the tests through tests/run.sh";
    throw std::runtime_error("no TLS test servers");
  }
  return v;
}

std::string cert(const std::string& file) {
  return env("BK_TEST_TLS_DIR") + "/" + file;
}

// A server of bk_start_redis_tls, verified with the test CA.
Options server(const char* url_variable) {
  Options o = parse_url(env(url_variable));
  EXPECT_TRUE(o.tls.enabled);
  o.tls.ca_file = cert("ca.crt");
  return o;
}

// The ConnectionError that connecting with `o` fails with (a test failure when it connects).
std::string refusal(const Options& o) {
  try {
    Connection c(o);
    ADD_FAILURE() << "connected to " << describe(o);
  } catch (const ConnectionError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::unavailable) << e.what();
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Tls, CommandsPipelinesTimeoutsAndClosesWorkAsOverPlainTcp) {
  Options o = server("BK_TEST_REDIS_TLS_URL");
  o.command_timeout = Millis{300};
  Connection c(o);
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
  // Larger than one TLS record (16 KB) and than one read, both ways.
  const std::string key = test::unique_prefix() + ":big";
  const std::string big(3 * 1024 * 1024 + 7, 'x');
  c.command({"SET", key, big, "PX", "60000"}).checked();
  EXPECT_EQ(c.command({"GET", key}).as_string(), big);
  std::vector<Args> incrs(20000, Args{"INCR", key + ":n"});
  const std::vector<Reply> replies = c.pipeline(incrs);
  ASSERT_EQ(replies.size(), incrs.size());
  for (std::size_t i = 0; i < replies.size(); ++i) {
    ASSERT_EQ(replies[i].as_int(), static_cast<long long>(i + 1));
  }
  c.command({"DEL", key, key + ":n"}).checked();

  // BLPOP blocks for 2 s on the server; the client gives up at 300 ms, as over TCP.
  EXPECT_THROW(c.command({"BLPOP", key + ":empty", "2"}), TimeoutError);
  EXPECT_FALSE(c.connected());
  EXPECT_THROW(c.command({"PING"}), ConnectionError);  // fails fast until reconnected
  c.reconnect();
  EXPECT_EQ(c.command({"CLIENT", "GETNAME"}).as_string(),
            "boardkeeper:" + std::to_string(getpid()));

  // The server closing the connection is a ClosedError (no close_notify is needed).
  Connection killer(o);
  killer.command({"CLIENT", "KILL", "ID", std::to_string(c.command({"CLIENT", "ID"}).as_int())})
      .checked();
  EXPECT_THROW(c.command({"PING"}), ClosedError);
  c.reconnect();
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
}

TEST(Tls, AServerSignedByAnotherCaIsRefusedWithOpenSslsReason) {
  Options o = server("BK_TEST_REDIS_TLS_URL");
  o.tls.ca_file = cert("other-ca.crt");
  o.password = "Sx4pw-not-shown";
  const std::string why = refusal(o);
  // Redis sends its CA along with its certificate (OpenSSL builds the chain): the chain ends
  // in a self-signed CA this client does not trust.
  EXPECT_TRUE(has(why,
                  "TLS handshake failed: certificate verify failed: self-signed "
                  "certificate in certificate chain"))
      << why;
  EXPECT_FALSE(has(why, "Sx4pw")) << why;
}

TEST(Tls, AnExpiredCertificateIsRefused) {
  const std::string why = refusal(server("BK_TEST_REDIS_TLS_EXPIRED_URL"));
  EXPECT_TRUE(has(why, "certificate verify failed: certificate has expired")) << why;
}

TEST(Tls, TheServersNameIsVerified) {
  Options o = server("BK_TEST_REDIS_TLS_URL");
  o.tls.server_name = "redis.example.com";  // not in the certificate (127.0.0.1, localhost)
  const std::string why = refusal(o);
  EXPECT_TRUE(has(why,
                  "certificate verify failed: hostname mismatch (expected "
                  "redis.example.com; set redis.tls.server_name"))
      << why;
  o.tls.server_name = "localhost";  // a name the certificate carries, for an IP address
  EXPECT_EQ(Connection(o).command({"PING"}).as_string(), "PONG");
}

// A server reached by its IP address must present a certificate naming that address: one
// that names only a host name (DNS:localhost) is refused, though a CA the client trusts
// signed it; reached by that name, the same server is accepted.
TEST(Tls, ACertificateWithoutTheServersIpAddressIsRefused) {
  Options o = server("BK_TEST_REDIS_TLS_DNSONLY_URL");
  const std::string why = refusal(o);
  EXPECT_TRUE(has(why, "certificate verify failed: IP address mismatch")) << why;
  o.tls.server_name = "localhost";
  EXPECT_EQ(Connection(o).command({"PING"}).as_string(), "PONG");
}

TEST(Tls, WithoutACaFileTheSystemStoreIsUsed) {
  Options o = server("BK_TEST_REDIS_TLS_URL");
  o.tls.ca_file.clear();
  // The test CA is in no system store: verification is on by default.
  const std::string why = refusal(o);
  EXPECT_TRUE(has(why, "certificate verify failed: self-signed certificate in certificate chain"))
      << why;
  // OpenSSL's store honours SSL_CERT_FILE (as it does for every program using it).
  const char* before = std::getenv("SSL_CERT_FILE");
  const std::string saved = before != nullptr ? before : "";
  setenv("SSL_CERT_FILE", cert("ca.crt").c_str(), 1);
  EXPECT_EQ(Connection(o).command({"PING"}).as_string(), "PONG");
  if (before != nullptr) {
    setenv("SSL_CERT_FILE", saved.c_str(), 1);
  } else {
    unsetenv("SSL_CERT_FILE");
  }
}

TEST(Tls, MutualTlsNeedsTheClientCertificate) {
  Options o = server("BK_TEST_REDIS_MTLS_URL");
  // TLS 1.3: the server checks the client's certificate after the handshake, so the refusal
  // arrives with the first command (still within connect, exit 3): OpenSSL's alert when it
  // is read before the server resets the connection, else a hint at the likely cause.
  std::string why = refusal(o);
  EXPECT_TRUE(has(why, "tlsv13 alert certificate required") ||
              has(why,
                  "does the server require a client certificate? (redis.tls.cert_file "
                  "and key_file)"))
      << why;

  o.tls.cert_file = cert("client.crt");
  o.tls.key_file = cert("server.key");  // not the certificate's key
  why = refusal(o);
  EXPECT_TRUE(has(why, "cannot use the client key " + cert("server.key") + ": key values mismatch"))
      << why;

  o.tls.key_file = cert("client.key");
  EXPECT_EQ(Connection(o).command({"PING"}).as_string(), "PONG");

  o.tls.ca_file = "/nonexistent/ca.pem";
  why = refusal(o);
  EXPECT_TRUE(has(why, "cannot load the CA certificates from /nonexistent/ca.pem")) << why;
}

TEST(Tls, APlainClientIsNotServedByATlsPort) {
  Options o = server("BK_TEST_REDIS_TLS_URL");
  o.tls.enabled = false;
  o.connect_timeout = Millis{1000};
  refusal(o);  // the server drops what is not a TLS handshake
}

TEST(Tls, EveryNodeOfAClusterIsReachedOverTls) {
  Options o = parse_url(env("BK_TEST_REDIS_CLUSTER_TLS_URL"));
  o.cluster = true;
  o.tls.ca_file = cert("ca.crt");
  Connection c(o);
  // Over TLS the seed names the other nodes' TLS ports (their plain ports would refuse a
  // handshake): every master answers, a pipeline spans them all.
  ASSERT_EQ(c.masters(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.master_command(i, {"PING"}).as_string(), "PONG");
  }
  const std::string p = test::unique_prefix();
  std::vector<Args> sets, gets;
  for (int i = 0; i < 300; ++i) {
    const std::string key = p + ":{" + std::to_string(i) + "}";
    sets.push_back({"SET", key, std::to_string(i), "PX", "60000"});
    gets.push_back({"GET", key});
  }
  for (const Reply& r : c.pipeline(sets)) r.checked();
  const std::vector<Reply> values = c.pipeline(gets);
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(values[static_cast<std::size_t>(i)].as_string(), std::to_string(i));
  }
}

TEST(Tls, TheCommandLineConnectsOverTlsAndExits3OnACertificateProblem) {
  const std::string prefix = test::unique_prefix();
  const std::string boards =
      "  - name: \"game:*\"\n    periods: [daily]\n    max_points: 1000\n"
      "    retention: {daily: 30d}\n";
  auto config = [&](const std::string& ca) {
    const std::string text = "redis:\n  url: " + env("BK_TEST_REDIS_TLS_URL") +
                             "\n  key_prefix: " + prefix + "\n  tls:\n    ca_file: " + ca +
                             "\npostgres:\n  url: " + test::postgres_url() +
                             "\n  schema: " + prefix + "\nboards:\n" + boards;
    const std::string path = "/tmp/bk-test-" + prefix + "-tls.yaml";
    std::ofstream(path) << text;
    return path;
  };
  const std::string good = config(cert("ca.crt"));
  ASSERT_EQ(test::run_cli({"--config", good, "migrate"}).exit_code, 0);
  test::RunResult r = test::run_cli({"--config", good, "add", "game:1", "ann", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli({"--config", good, "top", "game:1", "daily", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\"member\":\"ann\"")) << r.out;

  r = test::run_cli({"--config", config(cert("other-ca.crt")), "top", "game:1", "daily"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(has(r.err,
                  "TLS handshake failed: certificate verify failed: self-signed "
                  "certificate in certificate chain"))
      << r.err;
}

}  // namespace
}  // namespace bk::redis
