// mesh::curl with identity: the application's plain-HTTP request to an
// endpoint that discovery gives an identity goes over mutual TLS (the
// Mesh's certificate presented, the server's checked through curl's
// OpenSSL hook), to real HTTP/2 TLS servers on 127.0.0.1 that require a
// client certificate from the test CA; a server with another identity is
// refused naming both, as the gRPC transport refuses it.
#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/curl.h"
#include "mesh/mesh.h"
#include "tests/support/h2_test_server.h"
#include "tests/support/test_pki.h"

namespace mesh {
namespace {

using testing::H2TestServer;
using ::testing::HasSubstr;
using testing::LeafOptions;
using testing::TestPki;
using testing::WithSans;

constexpr char kTarget[] = "books:7001";
constexpr char kUrl[] = "http://books:7001/books/1";
constexpr char kBooksIdentity[] = "books.ns.serviceaccount.identity.mesh.test";
constexpr char kSpiffe[] = "spiffe://mesh.test/ns/books/sa/books";

size_t Append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

class CurlTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  void SetUp() override {
    auto pki = TestPki::Create();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *std::move(pki);
    auto client = pki_->Issue("client", WithSans({"URI:spiffe://mesh.test/ns/"
                                                  "web/sa/web"}));
    ASSERT_TRUE(client.ok()) << client.status();
    discovery_ = StaticDiscovery::Create();
    MeshOptions options;
    options.discovery = discovery_;
    options.identity.cert_chain_pem = client->cert;
    options.identity.private_key_pem = client->key;
    options.identity.trust_roots_pem = pki_->ca_pem();
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }

  // An HTTP/2 TLS server presenting `sans`, requiring a client certificate
  // of the test CA, answering "hello".
  std::unique_ptr<H2TestServer> Server(const std::string& name,
                                       std::vector<std::string> sans) {
    auto cert = pki_->Issue(name, WithSans(std::move(sans)));
    EXPECT_TRUE(cert.ok()) << cert.status();
    H2TestServer::TlsOptions tls;
    tls.cert_chain_pem = cert->cert;
    tls.private_key_pem = cert->key;
    tls.client_ca_pem = pki_->ca_pem();
    auto server = std::make_unique<H2TestServer>(
        [](const H2TestServer::Request&) {
          H2TestServer::Response out;
          out.body = "hello";
          return out;
        },
        tls);
    EXPECT_TRUE(server->Start().ok());
    return server;
  }

  void Use(const H2TestServer& server, const std::string& identity) {
    Endpoint e(server.address());
    e.tls_identity = identity;
    e.protocol_hint = ProtocolHint::kHttp2;
    ASSERT_TRUE(discovery_->SetEndpoints(kTarget, {e}).ok());
  }

  curl::Result Get(std::string* body) {
    CURL* easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, kUrl);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Append);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, body);
    curl::Request request;
    request.write = {&Append, body};
    curl::Result r = curl::Perform(*channel_, easy, request);
    curl_easy_cleanup(easy);
    return r;
  }

  std::unique_ptr<TestPki> pki_;
  std::shared_ptr<StaticDiscovery> discovery_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(CurlTlsTest, AnEndpointWithADnsIdentityIsReachedOverMutualTls) {
  auto server = Server("books", {"DNS:" + std::string(kBooksIdentity)});
  Use(*server, kBooksIdentity);
  for (int i = 0; i < 5; ++i) {
    std::string body;
    curl::Result r = Get(&body);
    ASSERT_EQ(r.code, CURLE_OK) << r.status;
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(body, "hello");
  }
  // The server required and accepted the Mesh's certificate, once: one
  // connection over the five requests (HTTP/2 over TLS, kept).
  EXPECT_EQ(server->connections(), 1);
  EXPECT_EQ(server->handshake_failures(), 0);
  H2TestServer::Request seen = server->received().front();
  EXPECT_EQ(seen.authority, "books:7001");
  EXPECT_EQ(seen.scheme, "https");
  EXPECT_EQ(seen.path, "/books/1");
}

TEST_F(CurlTlsTest, AnEndpointWithASpiffeIdentityIsReachedOverMutualTls) {
  auto server = Server("books", {"URI:" + std::string(kSpiffe)});
  Use(*server, kSpiffe);
  std::string body;
  curl::Result r = Get(&body);
  ASSERT_EQ(r.code, CURLE_OK) << r.status;
  EXPECT_EQ(body, "hello");
  EXPECT_EQ(server->received().front().authority, "books:7001");
}

TEST_F(CurlTlsTest, AnImpostorIsRefusedNamingTheExpectedAndThePresented) {
  auto impostor = Server("impostor", {"DNS:impostor.mesh.test"});
  Use(*impostor, kBooksIdentity);
  std::string body;
  curl::Result r = Get(&body);
  EXPECT_EQ(r.code, CURLE_PEER_FAILED_VERIFICATION);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr(absl::StrCat("server identity mismatch: expected '",
                                     kBooksIdentity,
                                     "', the server's certificate carries "
                                     "DNS:impostor.mesh.test")));
  EXPECT_EQ(impostor->requests(), 0);
  EXPECT_TRUE(body.empty());
}

TEST_F(CurlTlsTest, AServerTheTrustRootsDoNotVouchForIsRefused) {
  auto cert = pki_->Issue("rogue", [] {
    LeafOptions leaf;
    leaf.sans = {"DNS:" + std::string(kBooksIdentity)};
    leaf.self_signed = true;
    return leaf;
  }());
  ASSERT_TRUE(cert.ok());
  H2TestServer::TlsOptions tls;
  tls.cert_chain_pem = cert->cert;
  tls.private_key_pem = cert->key;
  H2TestServer rogue(
      [](const H2TestServer::Request&) { return H2TestServer::Response{}; },
      tls);
  ASSERT_TRUE(rogue.Start().ok());
  Use(rogue, kBooksIdentity);
  std::string body;
  curl::Result r = Get(&body);
  EXPECT_EQ(r.code, CURLE_PEER_FAILED_VERIFICATION);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("server certificate verify failed: "));
  EXPECT_EQ(rogue.requests(), 0);
}

}  // namespace
}  // namespace mesh
