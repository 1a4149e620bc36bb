// mesh-control-plane's TLS clusters proven by a client no one here wrote:
// gRPC's own xDS client (Debian's libgrpc++) with XdsCredentials, whose
// bootstrap has a file_watcher certificate provider with a client
// certificate from a CA made at run time (tests/support/test_pki.h). The
// endpoints are TLS echo servers that require and verify client
// certificates from that CA.
//
// A target whose endpoints have identities gets a Cluster with an
// UpstreamTlsContext: the client must present its certificate (the server
// records its serial) and accept only a server certificate carrying one of
// the identities — a DNS name or a SPIFFE URI — so that an impostor from
// the same CA is refused before any call reaches it, while the other
// targets go on serving. A target without identities stays plaintext. Any
// NACK from gRPC's client fails the test (TearDown) unless the test
// expects it.
//
// One control plane serves the whole suite: gRPC's xDS client reads its
// bootstrap once per process, hence this binary of its own (beside
// xds_interop_test). Each test uses its own target names.
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "meshtest/echo.grpc.pb.h"
#include "src/base/json_string.h"
#include "tests/support/control_plane_file.h"
#include "tests/support/test_echo_server.h"
#include "tests/support/test_pki.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

using controlplane::ControlPlane;
using internal::JsonString;
using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;
using ::testing::Each;
using testing::EchoServerTls;
using ::testing::HasSubstr;
using testing::KeyPair;
using testing::LeafOptions;
using ::testing::SizeIs;
using testing::TestEchoServer;
using testing::TestPki;
using testing::WithSans;

constexpr char kDnsIdentity[] = "books.ns.serviceaccount.identity.mesh.test";
constexpr char kSpiffe[] = "spiffe://mesh.test/ns/books/sa/books";

struct CallResult {
  grpc::Status status;
  std::string served_by;  // the echo server's address
};

// One unary call, bounded by `timeout` (gRPC ends it by its deadline).
CallResult CallOnce(TestEcho::Stub* stub,
                    absl::Duration timeout = absl::Seconds(10)) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  EchoRequest request;
  request.set_message("hello");
  EchoResponse response;
  grpc::Status status = stub->Unary(&context, request, &response);
  return {status, response.served_by()};
}

// An endpoint of the file: `address`, with `identity` unless empty.
struct Ep {
  std::string address;
  std::string identity;
};

// One target's entry of "targets".
std::string Target(const std::string& name, const std::vector<Ep>& endpoints) {
  std::vector<std::string> parts;
  for (const Ep& e : endpoints) {
    std::string part = absl::StrCat(R"({"address": )", JsonString(e.address));
    if (!e.identity.empty()) {
      absl::StrAppend(&part, R"(, "tls_identity": )", JsonString(e.identity));
    }
    parts.push_back(part + "}");
  }
  return absl::StrCat(JsonString(name), R"(: {"endpoints": [)",
                      absl::StrJoin(parts, ", "), "]}");
}

// A file with `targets` (entries made by Target) and, if set, the
// certificate provider instance the TLS contexts name.
std::string File(const std::vector<std::string>& targets,
                 const std::string& provider = "") {
  std::string file =
      absl::StrCat(R"({"targets": {)", absl::StrJoin(targets, ", "), "}");
  if (!provider.empty()) {
    absl::StrAppend(&file, R"(, "xds_certificate_provider": )",
                    JsonString(provider));
  }
  return file + "}";
}

// A file_watcher certificate provider instance of gRPC's bootstrap, with
// `pair` as the client's certificate and key and the test CA as roots.
std::string FileWatcher(const KeyPair& pair, const TestPki& pki) {
  return absl::StrCat(
      R"({"plugin_name": "file_watcher", "config": {"certificate_file": )",
      JsonString(pair.cert_file.string()), R"(, "private_key_file": )",
      JsonString(pair.key_file.string()), R"(, "ca_certificate_file": )",
      JsonString(pki.ca_file().string()), R"(, "refresh_interval": "1s"}})");
}

class XdsTlsInteropTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto pki = TestPki::Create();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = pki->release();
    auto client = pki_->Issue("client", WithSans({"URI:spiffe://mesh.test/ns/"
                                                  "web/sa/web"}));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = new KeyPair(*std::move(client));
    auto other = pki_->Issue("client-other", WithSans({"URI:spiffe://mesh.test/"
                                                       "ns/web/sa/other"}));
    ASSERT_TRUE(other.ok()) << other.status();
    other_client_ = new KeyPair(*std::move(other));

    path_ = new std::string(absl::StrCat(
        ::testing::TempDir(), "xds_tls_interop_", getpid(), ".json"));
    WriteFile(R"({"targets": {}})");
    auto cp = ControlPlane::Start("127.0.0.1:0", {}, /*verbose_xds=*/true);
    ASSERT_TRUE(cp.ok()) << cp.status();
    control_plane_ = cp->release();
    ASSERT_TRUE(control_plane_->WatchFile(*path_, absl::Milliseconds(20)).ok());
    // gRPC's xDS client reads this once per process, at its first xds:///
    // channel. "default" is the instance the control plane names unless
    // the file says otherwise; "other" has another client certificate.
    std::string bootstrap = absl::StrCat(
        R"({"xds_servers": [{"server_uri": "127.0.0.1:)",
        control_plane_->port(),
        R"(", "channel_creds": [{"type": "insecure"}],)",
        R"( "server_features": ["xds_v3"]}],)",
        R"( "node": {"id": "sidecar~127.0.0.1~tls-0.test~test.svc.cluster.local",)",
        R"( "cluster": "tls-interop", "metadata": {"GENERATOR": "grpc"}},)",
        R"( "certificate_providers": {"default": )",
        FileWatcher(*client_, *pki_), R"(, "other": )",
        FileWatcher(*other_client_, *pki_), "}}");
    setenv("GRPC_XDS_BOOTSTRAP_CONFIG", bootstrap.c_str(), 1);
  }

  static void TearDownTestSuite() {
    delete control_plane_;
    control_plane_ = nullptr;
    if (path_ != nullptr) std::remove(path_->c_str());
    delete path_;
    path_ = nullptr;
    delete client_;
    client_ = nullptr;
    delete other_client_;
    other_client_ = nullptr;
    delete pki_;
    pki_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(control_plane_, nullptr);
    ASSERT_NE(other_client_, nullptr);
    nacks_before_ = control_plane_->ads().nacks();
  }

  void TearDown() override {
    if (control_plane_ == nullptr) return;  // SetUpTestSuite failed
    EXPECT_EQ(control_plane_->ads().nacks() - nacks_before_, expected_nacks_)
        << "gRPC's xDS client rejected what we sent: "
        << control_plane_->ads().last_nack();
  }

  // Replaces the file at once (written aside, renamed), as editors do.
  static void WriteFile(const std::string& text) {
    testing::ReplaceTextFile(*path_, text);
  }

  // Writes `text` and waits (bounded) until the control plane applied it.
  static void Apply(const std::string& text) {
    testing::ApplyConfigFile(*control_plane_, *path_, text);
  }

  // A TLS echo server presenting a certificate with `sans` from the test
  // CA, requiring client certificates from it and recording their serials.
  static std::unique_ptr<TestEchoServer> TlsServer(
      const std::string& name, std::vector<std::string> sans) {
    auto cert = pki_->Issue(name, WithSans(std::move(sans)));
    EXPECT_TRUE(cert.ok()) << cert.status();
    if (!cert.ok()) return nullptr;
    EchoServerTls tls;
    tls.cert_chain = cert->cert;
    tls.private_key = cert->key;
    tls.client_ca = pki_->ca_pem();
    tls.record_client_serials = true;
    return TestEchoServer::Start(tls);
  }

  // A stub on "xds:///target" with xDS credentials: TLS as the Cluster
  // says, plaintext for a Cluster without a transport socket.
  static std::unique_ptr<TestEcho::Stub> XdsStub(const std::string& target) {
    return TestEcho::NewStub(grpc::CreateChannel(
        absl::StrCat("xds:///", target),
        grpc::XdsCredentials(grpc::InsecureChannelCredentials())));
  }

  // `calls` calls on `target`, every one expected to succeed on `server`.
  static void ExpectServedBy(const std::string& target,
                             const TestEchoServer& server, int calls) {
    auto stub = XdsStub(target);
    for (int i = 0; i < calls; ++i) {
      CallResult r = CallOnce(stub.get());
      ASSERT_TRUE(r.status.ok())
          << target << " call " << i << ": " << r.status.error_code() << " "
          << r.status.error_message();
      EXPECT_EQ(r.served_by, server.address()) << target;
    }
  }

  static TestPki* pki_;
  static KeyPair* client_;
  static KeyPair* other_client_;
  static ControlPlane* control_plane_;
  static std::string* path_;
  int64_t expected_nacks_ = 0;
  int64_t nacks_before_ = 0;
};

TestPki* XdsTlsInteropTest::pki_ = nullptr;
KeyPair* XdsTlsInteropTest::client_ = nullptr;
KeyPair* XdsTlsInteropTest::other_client_ = nullptr;
ControlPlane* XdsTlsInteropTest::control_plane_ = nullptr;
std::string* XdsTlsInteropTest::path_ = nullptr;

TEST_F(XdsTlsInteropTest, DnsAndSpiffeIdentitiesServeOverMutualTls) {
  auto dns = TlsServer("books-dns", {std::string("DNS:") + kDnsIdentity});
  auto uri = TlsServer("books-uri", {std::string("URI:") + kSpiffe});
  ASSERT_TRUE(dns && uri);
  Apply(File({Target("dns.tls.test:7001", {{dns->address(), kDnsIdentity}}),
              Target("spiffe.tls.test:7001", {{uri->address(), kSpiffe}})}));
  ExpectServedBy("dns.tls.test:7001", *dns, 5);
  ExpectServedBy("spiffe.tls.test:7001", *uri, 5);
  // Each call came with the client certificate of the bootstrap's
  // "default" instance: gRPC took the context and that provider.
  EXPECT_THAT(dns->client_serials(), SizeIs(5));
  EXPECT_THAT(dns->client_serials(), Each(client_->serial));
  EXPECT_THAT(uri->client_serials(), SizeIs(5));
  EXPECT_THAT(uri->client_serials(), Each(client_->serial));
}

TEST_F(XdsTlsInteropTest, OneClusterAcceptsEveryIdentityOfItsEndpoints) {
  auto dns = TlsServer("both-dns", {std::string("DNS:") + kDnsIdentity});
  auto uri = TlsServer("both-uri", {std::string("URI:") + kSpiffe});
  ASSERT_TRUE(dns && uri);
  Apply(File({Target("both.tls.test:7001", {{dns->address(), kDnsIdentity},
                                            {uri->address(), kSpiffe}})}));
  auto stub = XdsStub("both.tls.test:7001");
  // round_robin over both once both connected: every call succeeds until
  // each server has served a few (bounded: at most 200 calls).
  int on_dns = 0;
  int on_uri = 0;
  for (int i = 0; i < 200 && (on_dns < 3 || on_uri < 3); ++i) {
    CallResult r = CallOnce(stub.get());
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status.error_message();
    if (r.served_by == dns->address()) {
      ++on_dns;
    } else {
      EXPECT_EQ(r.served_by, uri->address());
      ++on_uri;
    }
  }
  // Each server's certificate matched one of the cluster's SANs.
  EXPECT_GE(on_dns, 3);
  EXPECT_GE(on_uri, 3);
  EXPECT_THAT(dns->client_serials(), SizeIs(on_dns));
  EXPECT_THAT(dns->client_serials(), Each(client_->serial));
  EXPECT_THAT(uri->client_serials(), SizeIs(on_uri));
  EXPECT_THAT(uri->client_serials(), Each(client_->serial));
}

TEST_F(XdsTlsInteropTest, AnImpostorIsRefusedAndNoCallReachesIt) {
  auto good = TlsServer("good", {std::string("DNS:") + kDnsIdentity});
  // Same CA, another name: only the SAN check can refuse it.
  auto impostor = TlsServer("impostor", {"DNS:impostor.mesh.test",
                                         "URI:spiffe://mesh.test/ns/x/sa/x"});
  ASSERT_TRUE(good && impostor);
  Apply(File(
      {Target("impostor.tls.test:7001", {{impostor->address(), kDnsIdentity}}),
       Target("good.tls.test:7001", {{good->address(), kDnsIdentity}}),
       Target("mixed.tls.test:7001", {{impostor->address(), kDnsIdentity},
                                      {good->address(), kDnsIdentity}})}));
  auto impostor_stub = XdsStub("impostor.tls.test:7001");
  for (int i = 0; i < 5; ++i) {
    CallResult r = CallOnce(impostor_stub.get());
    EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE)
        << i << ": " << r.status.error_message();
    // gRPC's xDS certificate verifier, not the chain, refused it.
    EXPECT_THAT(r.status.error_message(),
                HasSubstr("SANs from certificate did not match SANs from xDS "
                          "control plane"));
  }
  // The second target, served properly, keeps working; and in a target
  // with both, only the right server serves.
  ExpectServedBy("good.tls.test:7001", *good, 5);
  ExpectServedBy("mixed.tls.test:7001", *good, 10);
  EXPECT_EQ(impostor->calls(), 0);
  EXPECT_THAT(impostor->client_serials(), SizeIs(0));
  EXPECT_THAT(good->client_serials(), SizeIs(15));
  // Still refused after the others served.
  EXPECT_EQ(CallOnce(impostor_stub.get()).status.error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(impostor->calls(), 0);
}

TEST_F(XdsTlsInteropTest, APlaintextTargetStaysPlaintextBesideTlsOnes) {
  auto plain = TestEchoServer::Start();
  auto tls = TlsServer("beside", {std::string("DNS:") + kDnsIdentity});
  ASSERT_TRUE(plain && tls);
  Apply(
      File({Target("plain.tls.test:7001", {{plain->address(), ""}}),
            Target("beside.tls.test:7001", {{tls->address(), kDnsIdentity}})}));
  // XdsCredentials fall back to the insecure ones for a Cluster without a
  // transport socket: a plaintext server answers.
  ExpectServedBy("plain.tls.test:7001", *plain, 5);
  ExpectServedBy("beside.tls.test:7001", *tls, 5);
  EXPECT_THAT(tls->client_serials(), Each(client_->serial));
}

TEST_F(XdsTlsInteropTest, WithoutXdsCredentialsTheTlsContextIsIgnored) {
  auto server = TlsServer("insecure", {std::string("DNS:") + kDnsIdentity});
  ASSERT_TRUE(server);
  Apply(File(
      {Target("insecure.tls.test:7001", {{server->address(), kDnsIdentity}})}));
  // Plain insecure credentials: gRPC connects in plaintext, which the TLS
  // server cannot serve.
  auto stub = TestEcho::NewStub(grpc::CreateChannel(
      "xds:///insecure.tls.test:7001", grpc::InsecureChannelCredentials()));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(CallOnce(stub.get()).status.error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  EXPECT_EQ(server->calls(), 0);
}

TEST_F(XdsTlsInteropTest, TheFilesCertificateProviderIsTheOneUsed) {
  auto server = TlsServer("other", {std::string("URI:") + kSpiffe});
  ASSERT_TRUE(server);
  Apply(File({Target("other.tls.test:7001", {{server->address(), kSpiffe}})},
             "other"));
  ExpectServedBy("other.tls.test:7001", *server, 3);
  EXPECT_THAT(server->client_serials(), SizeIs(3));
  EXPECT_THAT(server->client_serials(), Each(other_client_->serial));
}

// Last: it leaves the client with a NACKed Cluster version.
TEST_F(XdsTlsInteropTest, AProviderTheBootstrapLacksIsNackedAndNamed) {
  auto server = TlsServer("missing", {std::string("DNS:") + kDnsIdentity});
  ASSERT_TRUE(server);
  Apply(File(
      {Target("missing.tls.test:7001", {{server->address(), kDnsIdentity}})},
      "missing"));
  // gRPC refuses a context naming an instance its bootstrap lacks: the
  // cluster's calls fail with the reason.
  auto stub = XdsStub("missing.tls.test:7001");
  CallResult r = CallOnce(stub.get());
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(r.status.error_message(),
              HasSubstr("unrecognized certificate provider instance name: "
                        "missing"));
  ASSERT_TRUE(testing::WaitFor(
      [&] { return control_plane_->ads().nacks() > nacks_before_; }));
  std::string nack = control_plane_->ads().last_nack();
  EXPECT_THAT(nack, HasSubstr("CDS"));
  EXPECT_THAT(nack, HasSubstr("outbound|7001||missing.tls.test"));
  EXPECT_THAT(nack,
              HasSubstr("unrecognized certificate provider instance name: "
                        "missing"));
  EXPECT_EQ(server->calls(), 0);
  expected_nacks_ = 1;
}

}  // namespace
}  // namespace mesh
