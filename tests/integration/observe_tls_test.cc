// The Observe server with mutual TLS (MeshOptions::tap_tls): a real gRPC
// client with a client certificate taps when its identity is allowed, is
// refused with UNAUTHENTICATED naming its identity when it is not, and
// cannot tap without a certificate; invalid tap_tls options are refused by
// Mesh::Create. Services served beside Observe (CSDS) follow the same rule.
//
// Certificates are made at run time with the `openssl` command
// (tests/support/test_pki.h: a CA, a server certificate for localhost /
// 127.0.0.1, two client certificates with SPIFFE URIs); without `openssl`
// every test fails saying so (scripts/install-deps.sh installs it).
#include <grpcpp/grpcpp.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/service/status/v3/csds.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/tap.grpc.pb.h"
#include "mesh/mesh.h"
#include "src/discovery/xds/csds_service.h"
#include "src/tap/observe_server.h"
#include "src/tap/tap_hub.h"
#include "tests/support/tap_fixtures.h"
#include "tests/support/test_pki.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

namespace csds = ::envoy::service::status::v3;
namespace tap = ::io::linkerd::proxy::tap;
using ::mesh::testing::AllRequests;
using ::mesh::testing::Observed;
using ::mesh::testing::Traffic;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTarget[] = "books.test:7000";
constexpr char kAllowed[] = "spiffe://mesh.test/ns/viz/sa/tap";
constexpr char kIntruder[] = "spiffe://mesh.test/ns/other/sa/intruder";

using ::mesh::testing::KeyPair;

struct Certificates {
  std::string error;  // empty when every certificate was made
  std::string ca;
  KeyPair server;
  KeyPair allowed_client;
  KeyPair intruder_client;
};

// The test PKI (tests/support/test_pki.h): a server certificate for
// localhost / 127.0.0.1 and two client certificates with SPIFFE URIs.
Certificates MakeCertificates() {
  Certificates out;
  auto pki = testing::TestPki::Create();
  if (!pki.ok()) {
    out.error = std::string(pki.status().message());
    return out;
  }
  auto leaf = [&](const std::string& name, const std::string& cn,
                  const std::string& san) -> KeyPair {
    if (!out.error.empty()) return {};
    testing::LeafOptions options;
    options.cn = cn;
    options.sans = {san};
    absl::StatusOr<KeyPair> pair = (*pki)->Issue(name, options);
    if (!pair.ok()) {
      out.error = std::string(pair.status().message());
      return {};
    }
    return *std::move(pair);
  };
  out.server = leaf("server", "localhost", "DNS:localhost,IP:127.0.0.1");
  out.allowed_client =
      leaf("tap", "tap-client", absl::StrCat("URI:", kAllowed));
  out.intruder_client =
      leaf("intruder", "intruder-client", absl::StrCat("URI:", kIntruder));
  out.ca = (*pki)->ca_pem();
  return out;
}

// Made once for the binary.
const Certificates& Certs() {
  static const Certificates* certs = new Certificates(MakeCertificates());
  return *certs;
}

TapTlsOptions ServerTls() {
  TapTlsOptions tls;
  tls.cert_chain_pem = Certs().server.cert;
  tls.private_key_pem = Certs().server.key;
  tls.client_ca_pem = Certs().ca;
  tls.allowed_identities = {kAllowed};
  return tls;
}

// A Mesh serving Observe on 127.0.0.1 with mutual TLS, in front of two
// echo backends.
struct Fixture : testing::TapMesh {
  explicit Fixture(std::vector<std::string> allowed = {kAllowed})
      : TapMesh(kTarget, 2, Options(std::move(allowed))) {
    if (mesh != nullptr) channel = *mesh->NewChannel(kTarget);
  }
  static MeshOptions Options(std::vector<std::string> allowed) {
    MeshOptions options;
    options.tap_tls = ServerTls();
    options.tap_tls.allowed_identities = std::move(allowed);
    return options;
  }
  std::unique_ptr<Channel> channel;
};

// A TLS channel to `target` presenting `client` (empty: no client
// certificate).
std::shared_ptr<grpc::Channel> TlsChannel(const std::string& target,
                                          const KeyPair& client) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = Certs().ca;
  ssl.pem_private_key = client.key;
  ssl.pem_cert_chain = client.cert;
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  return grpc::CreateCustomChannel(target, grpc::SslCredentials(ssl), args);
}

// Runs one Observe call (every request, up to `limit`) over TLS to its end,
// bounded by 20 s. `client` empty: no client certificate.
Observed Observe(const std::string& target, const KeyPair& client,
                 uint32_t limit) {
  return testing::Observe(TlsChannel(target, client), AllRequests(limit));
}

class ObserveTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Certs().error.empty())
        << "cannot make the test certificates: " << Certs().error;
  }
};

TEST_F(ObserveTlsTest, AnAllowedIdentityTaps) {
  Fixture f;
  ASSERT_NE(f.mesh, nullptr);
  Traffic traffic(*f.channel);
  Observed got = Observe(f.tap_target(), Certs().allowed_client, 3);
  traffic.Stop();
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  ASSERT_EQ(got.events.size(), 9u);  // 3 requests, 3 events each
  EXPECT_TRUE(got.events[0].http().has_request_init());
  EXPECT_EQ(got.events[0].http().request_init().authority(), kTarget);
}

// The subject CN is an identity too.
TEST_F(ObserveTlsTest, TheCommonNameCanBeAllowed) {
  Fixture f({"someone-else", "tap-client"});
  ASSERT_NE(f.mesh, nullptr);
  Traffic traffic(*f.channel);
  Observed got = Observe(f.tap_target(), Certs().allowed_client, 1);
  traffic.Stop();
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  EXPECT_EQ(got.events.size(), 3u);
}

// The intruder connects from 127.0.0.1: with TLS, loopback is not enough.
TEST_F(ObserveTlsTest, AnIdentityNotAllowedIsRefusedByName) {
  Fixture f;
  ASSERT_NE(f.mesh, nullptr);
  Traffic traffic(*f.channel);
  Observed got = Observe(f.tap_target(), Certs().intruder_client, 3);
  traffic.Stop();
  EXPECT_EQ(got.status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << got.status.error_message();
  EXPECT_THAT(got.status.error_message(), HasSubstr(kIntruder));
  EXPECT_TRUE(got.events.empty());
}

TEST_F(ObserveTlsTest, AClientWithoutACertificateCannotTap) {
  Fixture f;
  ASSERT_NE(f.mesh, nullptr);
  Traffic traffic(*f.channel);
  Observed got = Observe(f.tap_target(), KeyPair{}, 3);
  traffic.Stop();
  // The handshake fails (UNAVAILABLE); never OK, never an event.
  EXPECT_FALSE(got.status.ok());
  EXPECT_THAT(got.status.error_code(),
              ::testing::AnyOf(grpc::StatusCode::UNAVAILABLE,
                               grpc::StatusCode::UNAUTHENTICATED))
      << got.status.error_message();
  EXPECT_TRUE(got.events.empty());
}

TEST_F(ObserveTlsTest, APlaintextClientCannotTap) {
  Fixture f;
  ASSERT_NE(f.mesh, nullptr);
  auto stub = tap::Tap::NewStub(
      grpc::CreateChannel(f.tap_target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  tap::ObserveRequest request = AllRequests(1);
  auto reader = stub->Observe(&context, request);
  tap::TapEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_THAT(reader->Finish().error_code(), Not(grpc::StatusCode::OK));
}

// A service served beside Observe (CSDS, as for a Mesh with an xDS source)
// is held to the same rule: the allowed identity is answered, another is
// refused by name.
TEST_F(ObserveTlsTest, CsdsOnTheTapPortFollowsTheSameRule) {
  absl::StatusOr<std::unique_ptr<internal::ObserveServer>> server =
      internal::ObserveServer::Start(
          "127.0.0.1:0", std::make_shared<internal::TapHub>(), ServerTls(),
          {internal::xds::CsdsService()});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string target = absl::StrCat("127.0.0.1:", (*server)->port());
  auto fetch = [&target](const KeyPair& client) {
    auto stub =
        csds::ClientStatusDiscoveryService::NewStub(TlsChannel(target, client));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    csds::ClientStatusResponse response;
    return stub->FetchClientStatus(&context, csds::ClientStatusRequest(),
                                   &response);
  };
  grpc::Status allowed = fetch(Certs().allowed_client);
  EXPECT_TRUE(allowed.ok()) << allowed.error_message();
  grpc::Status intruder = fetch(Certs().intruder_client);
  EXPECT_EQ(intruder.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << intruder.error_message();
  EXPECT_THAT(intruder.error_message(), HasSubstr(kIntruder));
}

TEST_F(ObserveTlsTest, InvalidTlsOptionsAreRefusedNamingTheField) {
  auto discovery = StaticDiscovery::Create();
  struct Case {
    std::string name;
    std::function<void(MeshOptions&)> change;
    std::string field;
  };
  std::vector<Case> cases = {
      {"cert without key",
       [](MeshOptions& o) { o.tap_tls.private_key_pem.clear(); },
       "MeshOptions.tap_tls.private_key_pem"},
      {"key without cert",
       [](MeshOptions& o) { o.tap_tls.cert_chain_pem.clear(); },
       "MeshOptions.tap_tls.cert_chain_pem"},
      {"no client CA", [](MeshOptions& o) { o.tap_tls.client_ca_pem.clear(); },
       "MeshOptions.tap_tls.client_ca_pem"},
      {"no allowed identity",
       [](MeshOptions& o) { o.tap_tls.allowed_identities.clear(); },
       "MeshOptions.tap_tls.allowed_identities"},
      {"no tap address", [](MeshOptions& o) { o.tap_address.clear(); },
       "MeshOptions.tap_address"},
      {"allow-list without a certificate",
       [](MeshOptions& o) {
         o.tap_tls.cert_chain_pem.clear();
         o.tap_tls.private_key_pem.clear();
       },
       "MeshOptions.tap_tls.cert_chain_pem"},
      {"a key that is not PEM",
       [](MeshOptions& o) { o.tap_tls.private_key_pem = "not a key"; },
       "MeshOptions.tap_tls"},
  };
  for (const Case& c : cases) {
    MeshOptions options;
    options.discovery = discovery;
    options.tap_address = "127.0.0.1:0";
    options.tap_tls = ServerTls();
    c.change(options);
    absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(options);
    EXPECT_EQ(mesh.status().code(), absl::StatusCode::kInvalidArgument)
        << c.name << ": " << mesh.status();
    EXPECT_THAT(mesh.status().message(), HasSubstr(c.field)) << c.name;
  }
}

TEST(IsAllowedIdentityTest, ExactMatchOfAnyPresentedIdentity) {
  using internal::IsAllowedIdentity;
  EXPECT_TRUE(IsAllowedIdentity({"cn", kAllowed}, {"x", kAllowed}));
  EXPECT_TRUE(IsAllowedIdentity({"tap-client"}, {"tap-client"}));
  EXPECT_FALSE(IsAllowedIdentity({kIntruder}, {kAllowed}));
  EXPECT_FALSE(
      IsAllowedIdentity({"SPIFFE://mesh.test/ns/viz/sa/tap"}, {kAllowed}));
  EXPECT_FALSE(
      IsAllowedIdentity({"spiffe://mesh.test/ns/viz/sa/tap/x"}, {kAllowed}));
  EXPECT_FALSE(IsAllowedIdentity({}, {kAllowed}));
  EXPECT_FALSE(IsAllowedIdentity({kAllowed}, {}));
}

}  // namespace
}  // namespace mesh
