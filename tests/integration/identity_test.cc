// Identity (MeshOptions::identity): mutual TLS to endpoints that discovery
// gives an identity, against real TLS gRPC servers on 127.0.0.1 that
// require and verify client certificates. Certificates are made at run time
// with the `openssl` command (tests/support/test_pki.h).
//
// The right identity (DNS-like and SPIFFE URI) serves and the server sees
// the client's certificate; a server presenting another identity is refused
// at the handshake with a status naming both, and traffic goes to the
// others; a plaintext endpoint with require_identity is refused; rotated
// files are used by new connections while open streams keep theirs; bad
// replacements (expired, key of another certificate) are refused with a
// log line and the identity in use kept; bad options fail Mesh::Create.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "meshtest/echo.grpc.pb.h"
#include "src/base/mutex.h"
#include "src/tls/certificate_check.h"
#include "src/tls/identity_store.h"
#include "src/transport/grpc_transport.h"
#include "tests/support/log_capture.h"
#include "tests/support/test_echo_server.h"
#include "tests/support/test_pki.h"
#include "tests/support/test_support.h"
#include "tools/common/server_tls.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;
using testing::EchoServerTls;
using ::testing::HasSubstr;
using testing::KeyPair;
using testing::LeafOptions;
using testing::TestEchoServer;
using testing::TestPki;
using testing::WithSans;

constexpr char kTarget[] = "books.test:7000";
constexpr char kBooksIdentity[] = "books.ns.serviceaccount.identity.mesh.test";
constexpr char kSpiffe[] = "spiffe://mesh.test/ns/books/sa/books";

Endpoint WithIdentity(const std::string& address, const std::string& id) {
  Endpoint e(address);
  e.tls_identity = id;
  return e;
}

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = TestPki::Create();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *std::move(pki);
    auto client = pki_->Issue("client", WithSans({"URI:spiffe://mesh.test/ns/"
                                                  "web/sa/web"}));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  // A TLS echo server presenting a certificate with `sans`, requiring
  // client certificates from the test CA.
  std::unique_ptr<TestEchoServer> Server(const std::string& name,
                                         std::vector<std::string> sans) {
    auto cert = pki_->Issue(name, WithSans(std::move(sans)));
    EXPECT_TRUE(cert.ok()) << cert.status();
    if (!cert.ok()) return nullptr;
    EchoServerTls tls;
    tls.cert_chain = cert->cert;
    tls.private_key = cert->key;
    tls.client_ca = pki_->ca_pem();
    return TestEchoServer::Start(tls);
  }

  // The client identity from files, read again every 20 ms.
  IdentityOptions ClientIdentity() const {
    IdentityOptions id;
    id.cert_chain_file = client_.cert_file;
    id.private_key_file = client_.key_file;
    id.trust_roots_file = pki_->ca_file();
    id.refresh_interval = absl::Milliseconds(20);
    return id;
  }

  // A Mesh with `identity` over static discovery.
  void MakeMesh(const IdentityOptions& identity) {
    discovery_ = StaticDiscovery::Create();
    MeshOptions options;
    options.discovery = discovery_;
    options.identity = identity;
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewGrpcChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    stub_ = TestEcho::NewStub(*channel);
  }

  // A TLS server with kBooksIdentity, and a Mesh with the client identity
  // whose target has that server alone (with its identity).
  std::unique_ptr<TestEchoServer> ServeBooks(const std::string& name = "books");

  // kTarget's endpoints: `address` alone, expected to carry kBooksIdentity.
  void UseOnly(const std::string& address) { UseBooks({address}); }

  // kTarget's endpoints: `addresses`, each expected to carry kBooksIdentity.
  void UseBooks(const std::vector<std::string>& addresses) {
    std::vector<Endpoint> endpoints;
    for (const std::string& a : addresses) {
      endpoints.push_back(WithIdentity(a, kBooksIdentity));
    }
    ASSERT_TRUE(discovery_->SetEndpoints(kTarget, endpoints).ok());
  }

  // The agent's rotation: a new client certificate (same identity) written
  // over the client's files, certificate first.
  KeyPair RotateClientFiles() {
    auto next =
        pki_->Issue("client-next", WithSans({"URI:spiffe://mesh.test/ns/"
                                             "web/sa/web"}));
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok()) return KeyPair{};
    testing::ReplaceTextFile(client_.cert_file, next->cert);
    testing::ReplaceTextFile(client_.key_file, next->key);
    return *std::move(next);
  }

  // Whether calls, once a refresh has read both files, reach `server` with
  // the certificate of `serial` (bounded).
  bool CallsPresent(const TestEchoServer& server, const std::string& serial) {
    return testing::WaitFor([&] {
      EchoResponse r;
      return Call(&r).ok() && server.client_serials().back() == serial;
    });
  }

  grpc::Status Call(EchoResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    return stub_->Unary(&context, EchoRequest(), response);
  }

  std::unique_ptr<TestPki> pki_;
  KeyPair client_;
  std::shared_ptr<StaticDiscovery> discovery_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<TestEcho::Stub> stub_;
};

std::unique_ptr<TestEchoServer> IdentityTest::ServeBooks(
    const std::string& name) {
  auto server = Server(name, {std::string("DNS:") + kBooksIdentity});
  if (server == nullptr) return nullptr;
  MakeMesh(ClientIdentity());
  if (HasFatalFailure()) return nullptr;
  UseOnly(server->address());
  if (HasFatalFailure()) return nullptr;
  return server;
}

TEST_F(IdentityTest, RightDnsIdentityServesAndTheServerSeesTheClientCert) {
  auto server = ServeBooks();
  ASSERT_NE(server, nullptr);
  for (int i = 0; i < 3; ++i) {
    EchoResponse response;
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.served_by(), server->address());
  }
  EXPECT_THAT(
      server->client_serials(),
      ::testing::ElementsAre(client_.serial, client_.serial, client_.serial));
}

// The identity given as PEM in memory (no files) is presented and serves.
TEST_F(IdentityTest, AnIdentityInMemoryServesAndTheServerSeesItsCert) {
  auto server = Server("books", {std::string("DNS:") + kBooksIdentity});
  ASSERT_NE(server, nullptr);
  IdentityOptions identity;
  identity.cert_chain_pem = client_.cert;
  identity.private_key_pem = client_.key;
  identity.trust_roots_pem = pki_->ca_pem();
  MakeMesh(identity);
  UseOnly(server->address());
  EchoResponse response;
  grpc::Status status = Call(&response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.served_by(), server->address());
  EXPECT_THAT(server->client_serials(), ::testing::ElementsAre(client_.serial));
}

TEST_F(IdentityTest, SpiffeUriIdentityIsCheckedAgainstUriNames) {
  auto server = Server("books", {std::string("URI:") + kSpiffe});
  // A certificate with DNS names only cannot carry a URI identity.
  auto dns_only = Server("dns-only", {"DNS:books.mesh.test"});
  ASSERT_NE(server, nullptr);
  ASSERT_NE(dns_only, nullptr);
  MakeMesh(ClientIdentity());
  ASSERT_TRUE(
      discovery_
          ->SetEndpoints(kTarget, {WithIdentity(server->address(), kSpiffe)})
          .ok());
  EchoResponse response;
  grpc::Status status = Call(&response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(server->client_serials().size(), 1u);
  ASSERT_TRUE(
      discovery_
          ->SetEndpoints(kTarget, {WithIdentity(dns_only->address(), kSpiffe)})
          .ok());
  status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr(kSpiffe));
  EXPECT_TRUE(dns_only->client_serials().empty());
}

TEST_F(IdentityTest, ImpostorIsRefusedNamingBothAndTheOthersServe) {
  auto good1 = Server("books-1", {std::string("DNS:") + kBooksIdentity});
  auto good2 = Server("books-2", {std::string("DNS:") + kBooksIdentity});
  auto impostor = Server("impostor", {"DNS:impostor.mesh.test"});
  ASSERT_TRUE(good1 && good2 && impostor);
  MakeMesh(ClientIdentity());
  // Alone, the impostor's refusal is what the caller sees.
  UseOnly(impostor->address());
  EchoResponse response;
  grpc::Status refused = Call(&response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("TLS handshake with " + impostor->address() +
                        " refused: server identity mismatch"));
  EXPECT_THAT(refused.error_message(),
              HasSubstr(std::string("expected '") + kBooksIdentity + "'"));
  EXPECT_THAT(refused.error_message(), HasSubstr("DNS:impostor.mesh.test"));
  EXPECT_EQ(impostor->calls(), 0);
  // Among others (a fresh Mesh: the lone impostor's retries spent the
  // first one's retry budget), every call is served by them.
  MakeMesh(ClientIdentity());
  UseBooks({impostor->address(), good1->address(), good2->address()});
  for (int i = 0; i < 30; ++i) {
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << i << ": " << status.error_message();
    EXPECT_NE(response.served_by(), impostor->address());
  }
  EXPECT_EQ(impostor->calls(), 0);
  EXPECT_EQ(good1->calls() + good2->calls(), 30);
}

// An impostor's refusals count as its failures and eject it; the others
// (which serve the retries) are not counted as failing.
TEST_F(IdentityTest, AnImpostorIsCountedAsFailingAndEjected) {
  auto good1 = Server("books-1", {std::string("DNS:") + kBooksIdentity});
  auto good2 = Server("books-2", {std::string("DNS:") + kBooksIdentity});
  auto impostor = Server("impostor", {"DNS:impostor.mesh.test"});
  ASSERT_TRUE(good1 && good2 && impostor);
  MakeMesh(ClientIdentity());
  // Round robin picks the impostor within the first three picks; a first
  // ejection of a minute outlasts the test.
  ChannelOptions options;
  options.balancer.kind = BalancerKind::kRoundRobin;
  options.balancer.ejection_base = absl::Minutes(1);
  options.balancer.ejection_max = absl::Minutes(1);
  auto channel = mesh_->NewChannel(kTarget, options);
  ASSERT_TRUE(channel.ok()) << channel.status();
  UseBooks({impostor->address(), good1->address(), good2->address()});
  for (int i = 0; i < 10; ++i) {
    EchoResponse response;
    absl::Status status =
        (*channel)->Call("/meshtest.TestEcho/Unary", EchoRequest(), &response);
    ASSERT_TRUE(status.ok()) << i << ": " << status;
    EXPECT_NE(response.served_by(), impostor->address());
  }
  std::map<std::string, EndpointStats> stats;
  for (const EndpointStats& s : (*channel)->EndpointStatsSnapshot()) {
    stats[s.address] = s;
  }
  ASSERT_EQ(stats.size(), 3u);
  // Refused at its one pick, ejected at once, not picked again.
  const EndpointStats& bad = stats[impostor->address()];
  EXPECT_EQ(bad.picks, 1u);
  EXPECT_EQ(bad.failures, 1u);
  EXPECT_EQ(bad.ejections, 1u);
  EXPECT_TRUE(bad.ejected);
  for (const TestEchoServer* good : {good1.get(), good2.get()}) {
    const EndpointStats& s = stats[good->address()];
    EXPECT_EQ(s.failures, 0u) << good->address();
    EXPECT_EQ(s.ejections, 0u) << good->address();
    EXPECT_FALSE(s.ejected) << good->address();
  }
  EXPECT_EQ(stats[good1->address()].picks + stats[good2->address()].picks, 10u);
  EXPECT_EQ(good1->calls() + good2->calls(), 10);
  EXPECT_EQ(impostor->calls(), 0);
}

TEST_F(IdentityTest, RequireIdentityLeavesPlaintextEndpointsOut) {
  auto plain = TestEchoServer::Start();
  auto server = Server("books", {std::string("DNS:") + kBooksIdentity});
  ASSERT_NE(server, nullptr);
  IdentityOptions identity = ClientIdentity();
  identity.require_identity = true;
  MakeMesh(identity);
  testing::LogCapture log;
  ASSERT_TRUE(discovery_
                  ->SetEndpoints(kTarget, {{plain->address()},
                                           WithIdentity(server->address(),
                                                        kBooksIdentity)})
                  .ok());
  EXPECT_TRUE(log.WaitForLine({"without a TLS identity left out",
                               "require_identity", plain->address()}));
  for (int i = 0; i < 10; ++i) {
    EchoResponse response;
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.served_by(), server->address());
  }
  EXPECT_EQ(plain->calls(), 0);
  EXPECT_THAT(mesh_->Describe(), ::testing::Not(HasSubstr(plain->address())));
}

TEST_F(IdentityTest, WithoutRequireIdentityAPlaintextEndpointServes) {
  auto plain = TestEchoServer::Start();
  MakeMesh(ClientIdentity());
  ASSERT_TRUE(discovery_->SetEndpoints(kTarget, {{plain->address()}}).ok());
  EchoResponse response;
  grpc::Status status = Call(&response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(plain->calls(), 1);
}

TEST_F(IdentityTest, RotatedFilesAreUsedByNewConnectionsOpenStreamsKeepTheirs) {
  auto server = ServeBooks();
  ASSERT_NE(server, nullptr);
  // A stream opened with the first certificate.
  grpc::ClientContext stream_context;
  auto stream = stub_->Bidi(&stream_context);
  EchoRequest request;
  EchoResponse response;
  ASSERT_TRUE(stream->Write(request) && stream->Read(&response));
  // The agent replaces the files; new calls present the new certificate.
  KeyPair next = RotateClientFiles();
  ASSERT_FALSE(next.serial.empty());
  EXPECT_TRUE(CallsPresent(*server, next.serial))
      << "the server never saw serial " << next.serial;
  // The stream still works, on its first connection.
  ASSERT_TRUE(stream->Write(request) && stream->Read(&response));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// The files' directory is watched: a rotation is taken within a bounded
// wait while the polling (refresh_interval, at its 60 s default) would not
// come for a minute.
class IdentityWatchTest : public IdentityTest {
 protected:
  // A TLS server with kBooksIdentity, served once by a Mesh whose identity
  // is `identity` polled every 60 s, the server seeing client_'s serial.
  std::unique_ptr<TestEchoServer> ServeBooksPolledSlowly(
      IdentityOptions identity) {
    auto server = Server("books", {std::string("DNS:") + kBooksIdentity});
    if (server == nullptr) return nullptr;
    identity.refresh_interval = absl::Seconds(60);
    MakeMesh(identity);
    if (HasFatalFailure()) return nullptr;
    UseOnly(server->address());
    if (HasFatalFailure()) return nullptr;
    EchoResponse response;
    grpc::Status status = Call(&response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_THAT(server->client_serials(),
                ::testing::ElementsAre(client_.serial));
    return server;
  }
};

TEST_F(IdentityWatchTest, FilesRenamedOverTheOldOnesAreTakenBeforeThePoll) {
  auto server = ServeBooksPolledSlowly(ClientIdentity());
  ASSERT_NE(server, nullptr);
  KeyPair next = RotateClientFiles();
  ASSERT_FALSE(next.serial.empty());
  EXPECT_TRUE(CallsPresent(*server, next.serial))
      << "the server never saw serial " << next.serial;
}

// A Kubernetes secret volume as the kubelet writes it: each version's
// files in a timestamped directory, `..data` a symlink to it, the files
// symlinks through `..data`; a new version is a new directory and a new
// `..data` renamed over the old one.
TEST_F(IdentityWatchTest, ASecretVolumesDataSymlinkSwapIsTakenBeforeThePoll) {
  namespace fs = std::filesystem;
  const fs::path volume = pki_->dir() / "volume";
  fs::create_directory(volume);
  auto publish = [&](const std::string& version, const KeyPair& pair) {
    fs::create_directory(volume / version);
    testing::ReplaceTextFile(volume / version / "cert.pem", pair.cert);
    testing::ReplaceTextFile(volume / version / "key.pem", pair.key);
    testing::ReplaceTextFile(volume / version / "ca.pem", pki_->ca_pem());
    fs::create_directory_symlink(version, volume / "..data_tmp");
    fs::rename(volume / "..data_tmp", volume / "..data");
  };
  publish("..2026_11_30_10_00_00.1", client_);
  for (const char* name : {"cert.pem", "key.pem", "ca.pem"}) {
    fs::create_symlink(fs::path("..data") / name, volume / name);
  }
  IdentityOptions identity;
  identity.cert_chain_file = volume / "cert.pem";
  identity.private_key_file = volume / "key.pem";
  identity.trust_roots_file = volume / "ca.pem";
  auto server = ServeBooksPolledSlowly(identity);
  ASSERT_NE(server, nullptr);
  auto next = pki_->Issue("client-next",
                          WithSans({"URI:spiffe://mesh.test/ns/web/sa/web"}));
  ASSERT_TRUE(next.ok()) << next.status();
  publish("..2026_11_30_11_00_00.2", *next);
  EXPECT_TRUE(CallsPresent(*server, next->serial))
      << "the server never saw serial " << next->serial;
}

// An agent that writes the certificate, then (later) the key: the half
// pair is refused as ever, and the pair taken when the key follows.
TEST_F(IdentityWatchTest, AHalfWrittenPairIsRefusedAndTakenWhenTheKeyFollows) {
  auto server = ServeBooksPolledSlowly(ClientIdentity());
  ASSERT_NE(server, nullptr);
  auto next = pki_->Issue("client-next",
                          WithSans({"URI:spiffe://mesh.test/ns/web/sa/web"}));
  ASSERT_TRUE(next.ok()) << next.status();
  testing::LogCapture log;
  testing::ReplaceTextFile(client_.cert_file, next->cert);
  EXPECT_TRUE(log.WaitForLine(
      {"identity: refused the new version", "is not the key of the certificate",
       "keeping the certificate in use", client_.serial}));
  testing::ReplaceTextFile(client_.key_file, next->key);
  EXPECT_TRUE(CallsPresent(*server, next->serial))
      << "the server never saw serial " << next->serial;
}

class IdentityRefusalTest : public IdentityTest {
 protected:
  // Replaces the client's files with `replacement`'s and checks that the
  // refusal is logged with `reason` and the first certificate stays in
  // use.
  void ExpectRefused(const KeyPair& replacement_cert,
                     const KeyPair& replacement_key,
                     const std::string& reason) {
    auto server = ServeBooks();
    ASSERT_NE(server, nullptr);
    testing::LogCapture log;
    testing::ReplaceTextFile(client_.cert_file, replacement_cert.cert);
    testing::ReplaceTextFile(client_.key_file, replacement_key.key);
    EXPECT_TRUE(log.WaitForLine(
        {"identity: refused the new version", client_.cert_file.string(),
         reason, "keeping the certificate in use", client_.serial}));
    // A new connection (another endpoint) still presents the first one.
    auto other = Server("books-2", {std::string("DNS:") + kBooksIdentity});
    UseOnly(other->address());
    EchoResponse response;
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_THAT(other->client_serials(),
                ::testing::ElementsAre(client_.serial));
  }
};

TEST_F(IdentityRefusalTest, ExpiredReplacementIsRefusedAndTheOldKept) {
  LeafOptions expired = WithSans({"URI:spiffe://mesh.test/ns/web/sa/web"});
  expired.expired = true;
  auto next = pki_->Issue("client-expired", expired);
  ASSERT_TRUE(next.ok()) << next.status();
  ExpectRefused(*next, *next, "expired at");
}

TEST_F(IdentityRefusalTest, KeyOfAnotherCertificateIsRefusedAndTheOldKept) {
  auto next = pki_->Issue("client-next");
  auto stranger = pki_->Issue("stranger");
  ASSERT_TRUE(next.ok() && stranger.ok());
  ExpectRefused(*next, *stranger, "is not the key of the certificate");
}

TEST_F(IdentityTest, InvalidIdentityFailsMeshCreateNamingTheProblem) {
  MeshOptions options;
  options.discovery = StaticDiscovery::Create();
  options.identity = ClientIdentity();
  options.identity.private_key_file = pki_->dir() / "missing.key";
  auto mesh = Mesh::Create(options);
  ASSERT_FALSE(mesh.ok());
  EXPECT_EQ(mesh.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mesh.status().message(), HasSubstr("missing.key"));

  options.identity = ClientIdentity();
  options.identity.trust_roots_file.clear();
  mesh = Mesh::Create(options);
  ASSERT_FALSE(mesh.ok());
  EXPECT_THAT(mesh.status().message(), HasSubstr("trust roots"));

  LeafOptions expired;
  expired.expired = true;
  auto old = pki_->Issue("old", expired);
  ASSERT_TRUE(old.ok());
  options.identity = IdentityOptions();
  options.identity.cert_chain_pem = old->cert;
  options.identity.private_key_pem = old->key;
  options.identity.trust_roots_pem = pki_->ca_pem();
  mesh = Mesh::Create(options);
  ASSERT_FALSE(mesh.ok());
  EXPECT_THAT(mesh.status().message(), HasSubstr("expired at"));
}

TEST_F(IdentityTest, CertificateFactsAreReadFromTheLeaf) {
  LeafOptions leaf =
      WithSans({"DNS:a.mesh.test", "URI:spiffe://mesh.test/x", "IP:127.0.0.1"});
  leaf.cn = "leaf-cn";
  auto pair = pki_->Issue("facts", leaf);
  ASSERT_TRUE(pair.ok());
  auto facts = internal::CheckKeyPair(pair->cert, pair->key, absl::Now());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->serial, pair->serial);
  EXPECT_EQ(facts->subject_cn, "leaf-cn");
  EXPECT_THAT(facts->dns_names, ::testing::ElementsAre("a.mesh.test"));
  EXPECT_THAT(facts->uri_names, ::testing::ElementsAre("spiffe://mesh.test/x"));
  EXPECT_LT(facts->not_before, absl::Now() + absl::Minutes(1));
  EXPECT_GT(facts->not_after, absl::Now() + absl::Hours(23));
  EXPECT_TRUE(internal::CarriesIdentity("A.Mesh.Test", facts->dns_names,
                                        facts->uri_names));
  EXPECT_TRUE(internal::CarriesIdentity("spiffe://mesh.test/x",
                                        facts->dns_names, facts->uri_names));
  EXPECT_FALSE(internal::CarriesIdentity("spiffe://mesh.test/y",
                                         facts->dns_names, facts->uri_names));
  EXPECT_FALSE(internal::CarriesIdentity("127.0.0.1", facts->dns_names,
                                         facts->uri_names));
  // A URI identity is never matched against DNS names, nor a DNS-like one
  // against URIs.
  EXPECT_FALSE(internal::CarriesIdentity("spiffe://mesh.test/x",
                                         {"spiffe://mesh.test/x"}, {}));
  EXPECT_FALSE(internal::CarriesIdentity("a.mesh.test", {}, {"a.mesh.test"}));
  EXPECT_TRUE(internal::CheckTrustRoots(pki_->ca_pem() + pair->cert).ok());
  EXPECT_FALSE(internal::CheckTrustRoots("not a certificate").ok());
  EXPECT_FALSE(internal::CheckTrustRoots("-----BEGIN CERTIFICATE-----\nAAAA\n"
                                         "-----END CERTIFICATE-----\n")
                   .ok());
}

TEST_F(IdentityTest, AServerCertificateFromAnotherCaIsRefused) {
  // The right name, signed by a CA the client does not trust.
  auto other_ca = TestPki::Create("other-ca");
  ASSERT_TRUE(other_ca.ok()) << other_ca.status();
  auto cert = (*other_ca)->Issue(
      "books", WithSans({std::string("DNS:") + kBooksIdentity}));
  ASSERT_TRUE(cert.ok()) << cert.status();
  EchoServerTls tls;
  tls.cert_chain = cert->cert;
  tls.private_key = cert->key;
  tls.client_ca = pki_->ca_pem();
  auto stranger = TestEchoServer::Start(tls);
  MakeMesh(ClientIdentity());
  UseOnly(stranger->address());
  EchoResponse response;
  grpc::Status status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(stranger->calls(), 0);
}

// A server whose chain does not verify is refused naming OpenSSL's verify
// result, not only "certificate verify failed": the request is never
// sent.
class ChainRefusalTest : public IdentityTest {
 protected:
  // A TLS server presenting `cert` (with kBooksIdentity, requiring client
  // certificates of the test CA), and the status of one call to it from a
  // Mesh with the client identity; the server must not have been called.
  grpc::Status CallServerPresenting(const KeyPair& cert, std::string* address) {
    EchoServerTls tls;
    tls.cert_chain = cert.cert;
    tls.private_key = cert.key;
    tls.client_ca = pki_->ca_pem();
    auto server = TestEchoServer::Start(tls);
    *address = server->address();
    MakeMesh(ClientIdentity());
    UseOnly(server->address());
    EchoResponse response;
    grpc::Status status = Call(&response);
    EXPECT_EQ(server->calls(), 0);
    return status;
  }

  // Expects `status` to be the refusal of `address` for `reason`, naming
  // the certificate of `serial`.
  static void ExpectRefused(const grpc::Status& status,
                            const std::string& address,
                            const std::string& reason,
                            const std::string& serial) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(status.error_message(),
                HasSubstr(absl::StrCat("mesh: TLS handshake with ", address,
                                       " refused: server certificate verify "
                                       "failed: ",
                                       reason)));
    EXPECT_THAT(status.error_message(),
                HasSubstr(absl::StrCat("serial ", serial)));
  }
};

TEST_F(ChainRefusalTest, AnExpiredServerCertificateIsNamedAsExpired) {
  LeafOptions leaf = WithSans({std::string("DNS:") + kBooksIdentity});
  leaf.expired = true;
  auto cert = pki_->Issue("books-expired", leaf);
  ASSERT_TRUE(cert.ok()) << cert.status();
  std::string address;
  grpc::Status status = CallServerPresenting(*cert, &address);
  ExpectRefused(status, address, "certificate has expired", cert->serial);
}

TEST_F(ChainRefusalTest, ASelfSignedServerCertificateIsNamedAsSelfSigned) {
  LeafOptions leaf = WithSans({std::string("DNS:") + kBooksIdentity});
  leaf.self_signed = true;
  auto cert = pki_->Issue("books-self", leaf);
  ASSERT_TRUE(cert.ok()) << cert.status();
  std::string address;
  grpc::Status status = CallServerPresenting(*cert, &address);
  ExpectRefused(status, address, "self-signed certificate", cert->serial);
}

TEST_F(ChainRefusalTest, AServerOfAnotherCaIsNamedAsOfAnUnknownIssuer) {
  auto other_ca = TestPki::Create("other-ca");
  ASSERT_TRUE(other_ca.ok()) << other_ca.status();
  auto cert = (*other_ca)->Issue(
      "books", WithSans({std::string("DNS:") + kBooksIdentity}));
  ASSERT_TRUE(cert.ok()) << cert.status();
  std::string address;
  grpc::Status status = CallServerPresenting(*cert, &address);
  ExpectRefused(status, address, "unable to get local issuer certificate",
                cert->serial);
}

// The same check for an EndpointTls without a client certificate (xDS
// clusters, mesh-call --tls-ca alone).
TEST_F(ChainRefusalTest, AnEndpointTlsServerIsRefusedNamingTheVerifyResult) {
  LeafOptions leaf = WithSans({std::string("URI:") + kSpiffe});
  leaf.expired = true;
  auto cert = pki_->Issue("books-expired", leaf);
  ASSERT_TRUE(cert.ok()) << cert.status();
  EchoServerTls open_tls;
  open_tls.cert_chain = cert->cert;
  open_tls.private_key = cert->key;
  auto server = TestEchoServer::Start(open_tls);
  MakeMesh(IdentityOptions{});
  auto tls = std::make_shared<EndpointTls>();
  tls->certificates.trust_roots_file = pki_->ca_file();
  Endpoint endpoint(server->address());
  endpoint.tls = tls;
  ASSERT_TRUE(discovery_->SetEndpoints(kTarget, {endpoint}).ok());
  EchoResponse response;
  grpc::Status status = Call(&response);
  ExpectRefused(status, server->address(), "certificate has expired",
                cert->serial);
  EXPECT_EQ(server->calls(), 0);
}

TEST_F(IdentityTest, MetricsTapAndDescribeSayHowEachEndpointIsReached) {
  auto server = Server("books", {std::string("DNS:") + kBooksIdentity});
  auto impostor = Server("impostor", {"DNS:impostor.mesh.test"});
  auto plain = TestEchoServer::Start();
  ASSERT_TRUE(server && impostor);
  MakeMesh(ClientIdentity());
  TapOptions tap_options;
  tap_options.match = TapMatch::PathExact("/meshtest.TestEcho/Unary");
  auto tap = mesh_->Tap(tap_options);
  ASSERT_TRUE(tap.ok()) << tap.status();
  ASSERT_TRUE(
      discovery_
          ->SetEndpoints(kTarget,
                         {WithIdentity(server->address(), kBooksIdentity),
                          Endpoint(plain->address()),
                          WithIdentity(impostor->address(), kBooksIdentity)})
          .ok());
  // Until each endpoint has been tried (the impostor's calls go on to the
  // others); bounded.
  // (Its connection may try more than once: any count will do.)
  auto impostor_tried = [&] {
    return absl::StrContains(mesh_->Describe(),
                             "\"presented\":\"DNS:impostor.mesh.test\"");
  };
  for (int i = 0; i < 300 && (server->calls() == 0 || plain->calls() == 0 ||
                              !impostor_tried());
       ++i) {
    EchoResponse response;
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  ASSERT_GT(server->calls(), 0);
  ASSERT_GT(plain->calls(), 0);
  ASSERT_TRUE(impostor_tried());

  // Tap: the request to the TLS endpoint names its identity, the other
  // says why it had none.
  std::map<std::string, std::map<std::string, std::string>> labels;
  while (!labels.count(server->address()) || !labels.count(plain->address())) {
    std::optional<TapEvent> event = (*tap)->Next(absl::Seconds(10));
    ASSERT_TRUE(event.has_value());
    if (event->kind == TapEvent::Kind::kRequestInit) {
      labels[event->destination] = event->destination_labels;
    }
  }
  EXPECT_EQ(labels[server->address()]["tls"], "true");
  EXPECT_EQ(labels[server->address()]["server_id"], kBooksIdentity);
  EXPECT_EQ(labels[plain->address()]["tls"], "no_identity");
  EXPECT_EQ(labels[plain->address()]["no_tls_reason"],
            "not_provided_by_service_discovery");

  // Metrics: the same labels on the endpoint's traffic.
  std::string metrics = mesh_->Metrics();
  EXPECT_THAT(
      metrics,
      HasSubstr("endpoint_request_total{authority=\"" + std::string(kTarget) +
                "\",endpoint=\"" + server->address() +
                "\",tls=\"true\",server_id=\"" + kBooksIdentity + "\"} " +
                std::to_string(server->calls())));
  EXPECT_THAT(metrics, HasSubstr("endpoint=\"" + plain->address() +
                                 "\",tls=\"no_identity\",no_tls_reason=\"not_"
                                 "provided_by_service_discovery\"} " +
                                 std::to_string(plain->calls())));

  // Describe: each connection's state and handshakes, the refusal named.
  std::string describe = mesh_->Describe();
  EXPECT_THAT(describe,
              HasSubstr("\"tls\":\"true\",\"server_id\":\"" +
                        std::string(kBooksIdentity) +
                        "\",\"client_certificate_serial\":\"" + client_.serial +
                        "\",\"handshakes_succeeded\":\""));
  // The good server's connection never refused a handshake.
  EXPECT_THAT(
      describe,
      HasSubstr("\"presented\":\"DNS:" + std::string(kBooksIdentity) + "\"}"));
  EXPECT_THAT(describe, HasSubstr("\"presented\":\"DNS:impostor.mesh.test\""));
  EXPECT_THAT(describe, HasSubstr("\"last_refusal\":\"server identity "
                                  "mismatch: expected '" +
                                  std::string(kBooksIdentity)));
  EXPECT_THAT(describe, HasSubstr("\"tls\":\"no_identity\",\"no_tls_reason\":"
                                  "\"not_provided_by_service_discovery\""));
}

TEST_F(IdentityTest, HalfAnIdentityOrOneWithACustomTransportIsRefused) {
  MeshOptions options;
  options.discovery = StaticDiscovery::Create();
  options.identity.private_key_file = client_.key_file;
  options.identity.trust_roots_file = pki_->ca_file();
  auto mesh = Mesh::Create(options);
  ASSERT_FALSE(mesh.ok());
  EXPECT_THAT(mesh.status().message(), HasSubstr("no certificate chain"));

  options.identity = IdentityOptions();
  options.identity.require_identity = true;
  EXPECT_FALSE(Mesh::Create(options).ok());

  options.identity = ClientIdentity();
  options.transport_factory = [] { return NewGrpcTransport(); };
  mesh = Mesh::Create(options);
  ASSERT_FALSE(mesh.ok());
  EXPECT_THAT(mesh.status().message(), HasSubstr("transport_factory"));
}

TEST_F(IdentityTest, BrokenChainsAndEncryptedKeysAreRefused) {
  auto intermediate = pki_->Issue("intermediate");
  ASSERT_TRUE(intermediate.ok());
  // A chain whose second certificate was cut short.
  std::string truncated =
      client_.cert +
      intermediate->cert.substr(0, intermediate->cert.size() / 2) +
      "\n-----END CERTIFICATE-----\n";
  auto checked = internal::CheckKeyPair(truncated, client_.key, absl::Now());
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.status().message(), HasSubstr("certificate 2 of 2"));
  // A whole chain is fine.
  EXPECT_TRUE(internal::CheckKeyPair(client_.cert + intermediate->cert,
                                     client_.key, absl::Now())
                  .ok());
  // An encrypted key is refused (no passphrase is ever supplied).
  const std::string encrypted = (pki_->dir() / "encrypted.key").string();
  ASSERT_EQ(std::system(("openssl pkey -in " + client_.key_file.string() +
                         " -aes256 -passout pass:secret -out " + encrypted +
                         " </dev/null >/dev/null 2>&1")
                            .c_str()),
            0);
  checked = internal::CheckKeyPair(
      client_.cert, testing::ReadTextFile(encrypted), absl::Now());
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.status().message(), HasSubstr("private key"));
}

TEST_F(IdentityTest, TheTransportItselfRefusesPlaintextWhenRequired) {
  // Behind the destination's filter: a transport asked to call an endpoint
  // without an identity refuses it (never sent, so retried elsewhere).
  IdentityOptions id = ClientIdentity();
  id.require_identity = true;
  auto store = internal::IdentityStore::Create(id);
  ASSERT_TRUE(store.ok()) << store.status();
  internal::GrpcTransport transport(GrpcTransportOptions{}, *store);
  auto plain = TestEchoServer::Start();
  internal::Notification done;
  TransportResponse got;
  TransportRequest request;
  request.path = "/meshtest.TestEcho/Unary";
  transport.Send(Endpoint(plain->address()), std::move(request),
                 [&](TransportResponse r) {
                   got = std::move(r);
                   done.Notify();
                 });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(got.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status.message(), HasSubstr("require_identity"));
  EXPECT_THAT(got.status.message(), HasSubstr(plain->address()));
  EXPECT_TRUE(got.never_sent);
  EXPECT_EQ(plain->calls(), 0);
}

TEST_F(IdentityTest, IdentitiesFromLinkerdDiscoveryDnsLikeAndSpiffe) {
  // mesh-control-plane sends each endpoint's identity in Linkerd's Get
  // stream (a URI as UriLikeIdentity); mesh checks each server against it.
  auto dns_server = Server("books-dns", {std::string("DNS:") + kBooksIdentity});
  auto uri_server = Server("books-uri", {std::string("URI:") + kSpiffe});
  auto impostor = Server("impostor", {"URI:spiffe://mesh.test/ns/x/sa/x"});
  ASSERT_TRUE(dns_server && uri_server && impostor);
  auto config = controlplane::ParseConfig(absl::StrCat(
      R"({"targets": {")", kTarget, R"(": {"endpoints": [)", R"({"address": ")",
      dns_server->address(), R"(", "tls_identity": ")", kBooksIdentity,
      R"("},)", R"({"address": ")", uri_server->address(),
      R"(", "tls_identity": ")", kSpiffe, R"("},)", R"({"address": ")",
      impostor->address(), R"(", "tls_identity": ")", kSpiffe, R"("}]}}})"));
  ASSERT_TRUE(config.ok()) << config.status();
  auto cp = controlplane::ControlPlane::Start("127.0.0.1:0", *config);
  ASSERT_TRUE(cp.ok()) << cp.status();
  LinkerdDiscoveryOptions linkerd;
  linkerd.address = absl::StrCat("127.0.0.1:", (*cp)->port());
  auto discovery = NewLinkerdDiscovery(linkerd);
  ASSERT_TRUE(discovery.ok()) << discovery.status();
  MeshOptions options;
  options.discovery = *discovery;
  options.identity = ClientIdentity();
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  auto channel = (*mesh)->NewGrpcChannel(kTarget);
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto stub = TestEcho::NewStub(*channel);
  for (int i = 0;
       i < 100 && (dns_server->calls() == 0 || uri_server->calls() == 0); ++i) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    EchoResponse response;
    grpc::Status status = stub->Unary(&context, EchoRequest(), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_NE(response.served_by(), impostor->address());
  }
  EXPECT_GT(dns_server->calls(), 0);
  EXPECT_GT(uri_server->calls(), 0);
  EXPECT_EQ(impostor->calls(), 0);
  // Discovery delivered both forms, as sent.
  std::string describe = (*mesh)->Describe();
  EXPECT_THAT(describe, HasSubstr(std::string("\"tls_identity\":\"") +
                                  kBooksIdentity + "\""));
  EXPECT_THAT(describe,
              HasSubstr(std::string("\"tls_identity\":\"") + kSpiffe + "\""));
}

TEST_F(IdentityTest, AnAddressThatLosesItsIdentityLeavesTheSetWhenRequired) {
  auto server = Server("books", {std::string("DNS:") + kBooksIdentity});
  ASSERT_NE(server, nullptr);
  IdentityOptions identity = ClientIdentity();
  identity.require_identity = true;
  MakeMesh(identity);
  ChannelOptions fast;
  fast.fail_fast_timeout = absl::Milliseconds(200);
  auto channel = mesh_->NewChannel(kTarget, fast);
  ASSERT_TRUE(channel.ok()) << channel.status();
  UseOnly(server->address());
  EchoResponse response;
  ASSERT_TRUE((*channel)
                  ->Call("/meshtest.TestEcho/Unary", EchoRequest(), &response)
                  .ok());
  // Discovery sends the address again, without its identity (an Add, as
  // Linkerd sends changes): it leaves, and the calls say why.
  ASSERT_TRUE(
      discovery_
          ->Update(kTarget, EndpointUpdate::Add({Endpoint(server->address())}))
          .ok());
  EXPECT_THAT(mesh_->Describe(), ::testing::Not(HasSubstr(server->address())));
  absl::Status status =
      (*channel)->Call("/meshtest.TestEcho/Unary", EchoRequest(), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("without a TLS identity left out"));
  EXPECT_THAT(status.message(), HasSubstr(server->address()));
  EXPECT_EQ(server->calls(), 1);
}

TEST_F(IdentityTest, AnEndpointWhoseIdentityChangesStartsNewMetricSeries) {
  // The same address, first without an identity (plaintext to a TLS
  // server: refused), then with one (mutual TLS): its traffic series
  // follow, the first one does not keep counting under old labels.
  auto server = Server("books", {std::string("DNS:") + kBooksIdentity});
  ASSERT_NE(server, nullptr);
  MakeMesh(ClientIdentity());
  ASSERT_TRUE(discovery_->SetEndpoints(kTarget, {{server->address()}}).ok());
  EchoResponse response;
  EXPECT_FALSE(Call(&response).ok());
  EXPECT_THAT(mesh_->Metrics(),
              HasSubstr(server->address() + "\",tls=\"no_identity\""));
  UseOnly(server->address());
  ASSERT_TRUE(Call(&response).ok());
  std::string metrics = mesh_->Metrics();
  EXPECT_THAT(
      metrics,
      HasSubstr("endpoint_request_total{authority=\"" + std::string(kTarget) +
                "\",endpoint=\"" + server->address() +
                "\",tls=\"true\",server_id=\"" + kBooksIdentity + "\"} 1"));
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr("tls=\"no_identity\"")));
}

// Endpoint::tls from code (any discovery source may set it): the
// endpoint's own certificates and SAN matchers, with no identity of the
// Mesh's.
class EndpointTlsTest : public IdentityTest {
 protected:
  std::shared_ptr<const EndpointTls> Tls(std::vector<ServerNameMatcher> names) {
    auto tls = std::make_shared<EndpointTls>();
    tls->certificates = ClientIdentity();
    tls->server_names = std::move(names);
    return tls;
  }

  Endpoint With(const std::string& address,
                std::shared_ptr<const EndpointTls> tls) {
    Endpoint e(address);
    e.tls = std::move(tls);
    return e;
  }

  static ServerNameMatcher Prefix(std::string value) {
    ServerNameMatcher m;
    m.kind = ServerNameMatcher::Kind::kPrefix;
    m.value = std::move(value);
    return m;
  }
};

TEST_F(EndpointTlsTest, ASanPrefixFromCodeServesTheRightServerOnly) {
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  auto impostor =
      Server("impostor", {"URI:spiffe://mesh.test/ns/evil/sa/evil"});
  ASSERT_NE(books, nullptr);
  ASSERT_NE(impostor, nullptr);
  MakeMesh(IdentityOptions{});  // no identity of the Mesh's own
  auto tls = Tls({Prefix("spiffe://mesh.test/ns/books/")});
  ASSERT_TRUE(discovery_
                  ->SetEndpoints(kTarget, {With(books->address(), tls),
                                           With(impostor->address(), tls)})
                  .ok());
  for (int i = 0; i < 10; ++i) {
    EchoResponse response;
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.served_by(), books->address());
  }
  EXPECT_EQ(impostor->calls(), 0);
  EXPECT_EQ(books->client_serials().back(), client_.serial);
}

// An EndpointTls with trust roots and no certificate presents none: a
// server that requires one refuses, the same server not asking serves.
TEST_F(EndpointTlsTest, WithoutACertificateOnlyAServerNotAskingForOneServes) {
  auto cert = pki_->Issue("books", WithSans({std::string("URI:") + kSpiffe}));
  ASSERT_TRUE(cert.ok()) << cert.status();
  EchoServerTls open_tls;
  open_tls.cert_chain = cert->cert;
  open_tls.private_key = cert->key;
  EchoServerTls strict_tls = open_tls;
  strict_tls.client_ca = pki_->ca_pem();  // requires and verifies one
  auto open = TestEchoServer::Start(open_tls);
  auto strict = TestEchoServer::Start(strict_tls);
  MakeMesh(IdentityOptions{});
  auto tls = std::make_shared<EndpointTls>();
  tls->certificates.trust_roots_file = pki_->ca_file();
  tls->server_names = {Prefix("spiffe://mesh.test/ns/books/")};
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, {With(strict->address(), tls)}).ok());
  EchoResponse response;
  grpc::Status status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr("mesh: no TLS connection to " + strict->address()));
  EXPECT_EQ(strict->calls(), 0);
  EXPECT_TRUE(strict->client_serials().empty());
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, {With(open->address(), tls)}).ok());
  status = Call(&response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.served_by(), open->address());
  EXPECT_EQ(open->calls(), 1);
}

TEST_F(EndpointTlsTest, AMatcherThatCannotWorkRejectsTheUpdate) {
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  ASSERT_NE(books, nullptr);
  MakeMesh(IdentityOptions{});
  // An empty prefix would accept any name: refused, nothing served.
  ASSERT_TRUE(
      discovery_
          ->SetEndpoints(kTarget, {With(books->address(), Tls({Prefix("")}))})
          .ok());
  EchoResponse response;
  EXPECT_EQ(Call(&response).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(books->calls(), 0);
  EXPECT_THAT(
      mesh_->Describe(),
      HasSubstr("tls.server_names: prefix matcher with an empty value"));
}

TEST_F(EndpointTlsTest, AnApplicationsTransportDoesNotGetTlsEndpoints) {
  // Its transport would call them in plaintext: they are left out, and the
  // status says why.
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  ASSERT_NE(books, nullptr);
  discovery_ = StaticDiscovery::Create();
  MeshOptions options;
  options.discovery = discovery_;
  options.transport_factory = [] { return NewGrpcTransport(); };
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  mesh_ = *std::move(mesh);
  auto channel = mesh_->NewChannel(kTarget);
  ASSERT_TRUE(channel.ok()) << channel.status();
  ASSERT_TRUE(discovery_
                  ->SetEndpoints(kTarget, {With(books->address(),
                                                Tls({Prefix("spiffe://")}))})
                  .ok());
  EchoResponse response;
  absl::Status status =
      (*channel)->Call("/meshtest.TestEcho/Unary", EchoRequest(), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(),
              HasSubstr("MeshOptions.transport_factory's transport does not "
                        "carry it out"));
  EXPECT_EQ(books->calls(), 0);
}

// mesh-control-plane serving Linkerd's API over mutual TLS, with the
// certificate of `server_names`, and one plaintext echo endpoint for
// kTarget; the Mesh's Linkerd source connects with `server_identity`.
class LinkerdOverTlsTest : public IdentityTest {
 protected:
  void StartControlPlane(std::vector<std::string> server_names) {
    StartControlPlaneWith(WithSans(std::move(server_names)));
  }
  // The same, its certificate made as `leaf` says.
  void StartControlPlaneWith(const LeafOptions& leaf) {
    auto cert = pki_->Issue("destination", leaf);
    ASSERT_TRUE(cert.ok()) << cert.status();
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials;
    if (leaf.expired) {
      // The tool's loader (rightly) refuses to serve an expired one.
      grpc::SslServerCredentialsOptions options(
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
      options.pem_root_certs = pki_->ca_pem();
      options.pem_key_cert_pairs.push_back({cert->key, cert->cert});
      credentials = grpc::SslServerCredentials(options);
    } else {
      credentials = tools::ServerTlsFromFiles(cert->cert_file.string(),
                                              cert->key_file.string(),
                                              pki_->ca_file().string());
    }
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    echo_ = TestEchoServer::Start();
    auto config = controlplane::ParseConfig(absl::StrCat(
        R"({"targets": {")", kTarget, R"(": {"endpoints": [{"address": ")",
        echo_->address(), R"("}]}}})"));
    ASSERT_TRUE(config.ok()) << config.status();
    auto cp =
        controlplane::ControlPlane::Start("127.0.0.1:0", *config,
                                          /*verbose_xds=*/false, *credentials);
    ASSERT_TRUE(cp.ok()) << cp.status();
    cp_ = *std::move(cp);
  }

  // A Mesh over Linkerd discovery from the control plane, with the client
  // identity for the control plane (if `server_identity` is set); a channel
  // to kTarget.
  void Connect(const std::string& server_identity) {
    LinkerdDiscoveryOptions linkerd;
    linkerd.address = absl::StrCat("127.0.0.1:", cp_->port());
    if (!server_identity.empty()) {
      linkerd.identity = ClientIdentity();
      linkerd.server_identity = server_identity;
    }
    auto discovery = NewLinkerdDiscovery(linkerd);
    ASSERT_TRUE(discovery.ok()) << discovery.status();
    MeshOptions options;
    options.discovery = *discovery;
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }

  std::unique_ptr<TestEchoServer> echo_;
  std::unique_ptr<controlplane::ControlPlane> cp_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(LinkerdOverTlsTest, TheRightDestinationServiceIdentityServes) {
  constexpr char kDestination[] =
      "linkerd-destination.linkerd.serviceaccount.identity.mesh.test";
  StartControlPlane({std::string("DNS:") + kDestination});
  Connect(kDestination);
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  EchoResponse response;
  EXPECT_TRUE(
      channel_->Call("/meshtest.TestEcho/Unary", EchoRequest(), &response)
          .ok());
  EXPECT_EQ(response.served_by(), echo_->address());
  EXPECT_GT(cp_->calls("Get", kTarget), 0);
}

TEST_F(LinkerdOverTlsTest, AnImpostorControlPlaneIsRefusedAndNamed) {
  StartControlPlane({"DNS:impostor.mesh.test"});
  Connect("linkerd-destination.linkerd.serviceaccount.identity.mesh.test");
  EXPECT_FALSE(channel_->WaitForEndpoints(absl::Milliseconds(500)).ok());
  EXPECT_EQ(cp_->calls("Get", kTarget), 0);
  // The discovery stream says why.
  EXPECT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(mesh_->Describe(), "server identity mismatch");
  }));
  EXPECT_THAT(mesh_->Describe(), HasSubstr("DNS:impostor.mesh.test"));
}

TEST_F(LinkerdOverTlsTest, AnExpiredControlPlaneCertificateIsNamedAsExpired) {
  constexpr char kDestination[] =
      "linkerd-destination.linkerd.serviceaccount.identity.mesh.test";
  LeafOptions leaf = WithSans({std::string("DNS:") + kDestination});
  leaf.expired = true;
  StartControlPlaneWith(leaf);
  Connect(kDestination);
  EXPECT_FALSE(channel_->WaitForEndpoints(absl::Milliseconds(500)).ok());
  EXPECT_EQ(cp_->calls("Get", kTarget), 0);
  // The discovery stream says why, in OpenSSL's words.
  EXPECT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(mesh_->Describe(), "certificate has expired");
  })) << mesh_->Describe();
}

TEST_F(LinkerdOverTlsTest, APlaintextClientIsNotServed) {
  StartControlPlane({"DNS:linkerd-destination.mesh.test"});
  Connect("");  // no identity: plaintext to a TLS server
  EXPECT_FALSE(channel_->WaitForEndpoints(absl::Milliseconds(500)).ok());
  EXPECT_EQ(cp_->calls("Get", kTarget), 0);
}

TEST_F(IdentityTest, LinkerdServerIdentityNeedsAnIdentity) {
  LinkerdDiscoveryOptions linkerd;
  linkerd.address = "127.0.0.1:1";
  linkerd.server_identity = "linkerd-destination.mesh.test";
  auto discovery = NewLinkerdDiscovery(linkerd);
  ASSERT_FALSE(discovery.ok());
  EXPECT_THAT(discovery.status().message(), HasSubstr("certificate chain"));
  linkerd.identity = ClientIdentity();
  linkerd.server_identity.clear();
  discovery = NewLinkerdDiscovery(linkerd);
  ASSERT_FALSE(discovery.ok());
  EXPECT_THAT(discovery.status().message(),
              HasSubstr("LinkerdDiscoveryOptions.server_identity is required"));
}

// The same control plane serving xDS over mutual TLS, and mesh's xDS
// client with channel_creds of type "tls" (gRPC's bootstrap form): the
// server is checked the usual way, by its name (here 127.0.0.1).
class XdsOverTlsTest : public LinkerdOverTlsTest {
 protected:
  absl::StatusOr<std::shared_ptr<DiscoverySource>> XdsSource(
      const std::string& ca_file) {
    XdsOptions xds;
    xds.bootstrap_json = absl::StrCat(
        R"({"xds_servers": [{"server_uri": "127.0.0.1:)", cp_->port(),
        R"(", "server_features": ["xds_v3"], "channel_creds": [{"type": "tls",)",
        R"( "config": {"ca_certificate_file": ")", ca_file,
        R"(", "certificate_file": ")", client_.cert_file.string(),
        R"(", "private_key_file": ")", client_.key_file.string(),
        R"("}}]}], "node": {"id": "identity-test"}})");
    return NewXdsDiscovery(xds);
  }

  void ConnectXds() {
    auto discovery = XdsSource(pki_->ca_file().string());
    ASSERT_TRUE(discovery.ok()) << discovery.status();
    MeshOptions options;
    options.discovery = *discovery;
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(absl::StrCat("xds:///", kTarget));
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }
};

TEST_F(XdsOverTlsTest, ChannelCredsTlsReachTheControlPlane) {
  StartControlPlane({"IP:127.0.0.1"});
  ConnectXds();
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  EchoResponse response;
  EXPECT_TRUE(
      channel_->Call("/meshtest.TestEcho/Unary", EchoRequest(), &response)
          .ok());
  EXPECT_EQ(response.served_by(), echo_->address());
}

TEST_F(XdsOverTlsTest, AServerNotNamedForItsAddressIsRefused) {
  StartControlPlane({"DNS:elsewhere.mesh.test"});
  ConnectXds();
  EXPECT_FALSE(channel_->WaitForEndpoints(absl::Milliseconds(500)).ok());
}

TEST_F(XdsOverTlsTest, UnreadableTlsFilesFailTheSourceNamingThem) {
  StartControlPlane({"IP:127.0.0.1"});
  auto discovery = XdsSource((pki_->dir() / "missing-ca.pem").string());
  ASSERT_FALSE(discovery.ok());
  EXPECT_EQ(discovery.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(discovery.status().message(), HasSubstr("missing-ca.pem"));
}

// xDS clusters with an UpstreamTlsContext (gRFC A29): mesh-control-plane
// sends each target whose endpoints have a tls_identity as a cluster whose
// context names the bootstrap's "default" certificate provider and the
// identities as SAN matchers, as istiod does; the xDS client takes the
// certificates from the bootstrap's file_watcher provider. The Mesh has no
// identity of its own: the cluster's TLS is all there is.
class XdsClusterTlsTest : public IdentityTest {
 protected:
  // A plaintext control plane whose kTarget has `endpoints` (address and
  // tls_identity).
  void StartControlPlane(
      const std::vector<std::pair<std::string, std::string>>& endpoints) {
    std::string list;
    for (const auto& [address, identity] : endpoints) {
      absl::StrAppend(&list, list.empty() ? "" : ", ", R"({"address": ")",
                      address, R"(", "tls_identity": ")", identity, R"("})");
    }
    auto config = controlplane::ParseConfig(absl::StrCat(
        R"({"targets": {")", kTarget, R"(": {"endpoints": [)", list, "]}}}"));
    ASSERT_TRUE(config.ok()) << config.status();
    auto cp = controlplane::ControlPlane::Start("127.0.0.1:0", *config);
    ASSERT_TRUE(cp.ok()) << cp.status();
    cp_ = *std::move(cp);
  }

  // A Mesh over xDS from the control plane, whose bootstrap has
  // `providers` as its certificate_providers; a channel to kTarget.
  void Connect(const std::string& providers) {
    XdsOptions xds;
    xds.bootstrap_json = absl::StrCat(
        R"({"xds_servers": [{"server_uri": "127.0.0.1:)", cp_->port(),
        R"(", "server_features": ["xds_v3"], "channel_creds": )",
        R"([{"type": "insecure"}]}], "node": {"id": "identity-test"}, )",
        R"("certificate_providers": )", providers, "}");
    auto discovery = NewXdsDiscovery(xds);
    ASSERT_TRUE(discovery.ok()) << discovery.status();
    MeshOptions options;
    options.discovery = *discovery;
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewGrpcChannel(absl::StrCat("xds:///", kTarget));
    ASSERT_TRUE(channel.ok()) << channel.status();
    stub_ = TestEcho::NewStub(*channel);
  }

  // The bootstrap's providers: "default", a file_watcher of the client's
  // files read every 50 ms.
  std::string FileWatcher() const {
    return absl::StrCat(
        R"({"default": {"plugin_name": "file_watcher", "config": {)",
        R"("certificate_file": ")", client_.cert_file.string(),
        R"(", "private_key_file": ")", client_.key_file.string(),
        R"(", "ca_certificate_file": ")", pki_->ca_file().string(),
        R"(", "refresh_interval": "0.05s"}}})");
  }

  std::unique_ptr<controlplane::ControlPlane> cp_;
};

TEST_F(XdsClusterTlsTest, TheClusterContextServesTheRightServerOnly) {
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  auto impostor =
      Server("impostor", {"URI:spiffe://mesh.test/ns/evil/sa/evil"});
  ASSERT_NE(books, nullptr);
  ASSERT_NE(impostor, nullptr);
  StartControlPlane(
      {{books->address(), kSpiffe}, {impostor->address(), kSpiffe}});
  Connect(FileWatcher());
  int served = 0;
  for (int i = 0; i < 20; ++i) {
    EchoResponse response;
    grpc::Status status = Call(&response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    served += response.served_by() == books->address();
  }
  EXPECT_EQ(served, 20);
  EXPECT_EQ(impostor->calls(), 0);
  EXPECT_EQ(cp_->ads().nacks(), 0) << cp_->ads().last_nack();
  // The server saw the provider's client certificate.
  ASSERT_FALSE(books->client_serials().empty());
  EXPECT_EQ(books->client_serials().back(), client_.serial);
  // Describe shows what the connection to books checks.
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr(absl::StrCat("exact '", kSpiffe, "'")));
  EXPECT_THAT(
      mesh_->Metrics(),
      HasSubstr(absl::StrCat("endpoint=\"", books->address(),
                             "\",tls=\"true\",server_id=\"", kSpiffe, "\"")));
}

TEST_F(XdsClusterTlsTest, AnImpostorAloneIsRefusedNamingBothIdentities) {
  auto impostor =
      Server("impostor", {"URI:spiffe://mesh.test/ns/evil/sa/evil"});
  ASSERT_NE(impostor, nullptr);
  StartControlPlane({{impostor->address(), kSpiffe}});
  Connect(FileWatcher());
  EchoResponse response;
  grpc::Status status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("server identity mismatch"));
  EXPECT_THAT(status.error_message(),
              HasSubstr(absl::StrCat("exact '", kSpiffe, "'")));
  EXPECT_THAT(status.error_message(),
              HasSubstr("URI:spiffe://mesh.test/ns/evil/sa/evil"));
  EXPECT_EQ(impostor->calls(), 0);
}

TEST_F(XdsClusterTlsTest, RotatedProviderFilesAreUsedForTheNextConnection) {
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  ASSERT_NE(books, nullptr);
  StartControlPlane({{books->address(), kSpiffe}});
  Connect(FileWatcher());
  EchoResponse response;
  ASSERT_TRUE(Call(&response).ok());
  ASSERT_EQ(books->client_serials().back(), client_.serial);
  KeyPair next = RotateClientFiles();
  ASSERT_FALSE(next.serial.empty());
  EXPECT_TRUE(CallsPresent(*books, next.serial))
      << "the server never saw serial " << next.serial;
}

TEST_F(XdsClusterTlsTest, AProviderTheBootstrapLacksIsNackedAndNamed) {
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  ASSERT_NE(books, nullptr);
  StartControlPlane({{books->address(), kSpiffe}});
  // A provider under another name: the cluster's "default" is unknown.
  std::string providers = FileWatcher();
  providers.replace(providers.find("\"default\""), 9, "\"other\"");
  Connect(providers);
  ASSERT_TRUE(testing::WaitFor([&] { return cp_->ads().nacks() > 0; }));
  EXPECT_THAT(cp_->ads().last_nack(),
              HasSubstr("'default' is not a certificate provider of the "
                        "bootstrap"));
  EchoResponse response;
  grpc::Status status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(),
              HasSubstr("is not a certificate provider"));
  EXPECT_EQ(books->calls(), 0);
}

TEST_F(XdsClusterTlsTest, UnreadableProviderFilesFailCallsNamingTheFile) {
  auto books = Server("books", {std::string("URI:") + kSpiffe});
  ASSERT_NE(books, nullptr);
  StartControlPlane({{books->address(), kSpiffe}});
  std::string providers = FileWatcher();
  const std::string ca = pki_->ca_file().string();
  providers.replace(providers.find(ca), ca.size(),
                    (pki_->dir() / "not-yet-written.pem").string());
  Connect(providers);
  EchoResponse response;
  grpc::Status status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("not-yet-written.pem"));
  EXPECT_EQ(books->calls(), 0);
}

}  // namespace
}  // namespace mesh
