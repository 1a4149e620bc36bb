// The admin page over mutual TLS (MeshOptions::admin_tls), read with
// libcurl over OpenSSL, a client of another TLS library than the server's
// (GnuTLS, libmicrohttpd's): clients whose certificate names an allowed
// identity are served, wherever they are; every other client gets 403
// saying why. Certificates are made at run time by openssl (TestPki).
#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mesh/discovery.h"
#include "mesh/mesh.h"
#include "tests/support/http_probe.h"
#include "tests/support/test_pki.h"
#include "tests/support/test_support.h"
#include "tools/common/echo_backend.h"

namespace mesh {
namespace {

using testing::KeyPair;
using testing::LeafOptions;
using testing::TestPki;
using testing::WithSans;

constexpr char kTarget[] = "books:7000";
constexpr char kAllowed[] = "spiffe://mesh.test/ns/ops/sa/admin";
// The name the server's certificate carries; the tests resolve it to the
// address they connect to (CURLOPT_RESOLVE).
constexpr char kServerName[] = "admin.mesh.test";

// What one HTTPS request got: curl's result and error text, the status and
// the body.
struct Fetched {
  CURLcode code = CURLE_OK;
  std::string error;
  long status = 0;
  std::string body;
};

size_t Collect(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// The client's TLS: its certificate (none when null), and the CA it checks
// the server with.
struct ClientTls {
  const KeyPair* identity = nullptr;
  std::string server_ca_file;
};

CURL* NewHandle(const std::string& ip, const std::string& port,
                const std::string& path, const ClientTls& tls,
                curl_slist** resolve) {
  CURL* easy = curl_easy_init();
  const std::string url =
      absl::StrCat("https://", kServerName, ":", port, path);
  *resolve = curl_slist_append(
      nullptr, absl::StrCat(kServerName, ":", port, ":", ip).c_str());
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_RESOLVE, *resolve);
  curl_easy_setopt(easy, CURLOPT_CAINFO, tls.server_ca_file.c_str());
  if (tls.identity != nullptr) {
    curl_easy_setopt(easy, CURLOPT_SSLCERT,
                     tls.identity->cert_file.string().c_str());
    curl_easy_setopt(easy, CURLOPT_SSLKEY,
                     tls.identity->key_file.string().c_str());
  }
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  return easy;
}

Fetched Fetch(const std::string& ip, const std::string& port,
              const std::string& path, const ClientTls& tls) {
  Fetched out;
  curl_slist* resolve = nullptr;
  CURL* easy = NewHandle(ip, port, path, tls, &resolve);
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &out.body);
  out.code = curl_easy_perform(easy);
  out.error = error;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &out.status);
  curl_easy_cleanup(easy);
  curl_slist_free_all(resolve);
  return out;
}

class AdminTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    auto pki = TestPki::Create();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *std::move(pki);
    auto server =
        pki_->Issue("admin-server", WithSans({"DNS:admin.mesh.test"}));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto allowed =
        pki_->Issue("allowed", WithSans({absl::StrCat("URI:", kAllowed)}));
    ASSERT_TRUE(allowed.ok()) << allowed.status();
    allowed_ = *std::move(allowed);

    backends_ = testing::StartBackends(1);
    discovery_ = StaticDiscovery::Create();
    ASSERT_TRUE(
        discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends_))
            .ok());
    auto mesh = Mesh::Create(Options("127.0.0.1:0"));
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    port_ = mesh_->AdminAddress().substr(mesh_->AdminAddress().rfind(':') + 1);
  }

  void TearDown() override { curl_global_cleanup(); }

  MeshOptions Options(const std::string& address) const {
    MeshOptions options;
    options.discovery = discovery_;
    options.admin_address = address;
    options.admin_tls.cert_chain_pem = server_.cert;
    options.admin_tls.private_key_pem = server_.key;
    options.admin_tls.client_ca_pem = pki_->ca_pem();
    options.admin_tls.allowed_identities = {kAllowed};
    return options;
  }

  ClientTls As(const KeyPair* identity) const {
    return ClientTls{identity, pki_->ca_file().string()};
  }

  std::unique_ptr<TestPki> pki_;
  KeyPair server_;
  KeyPair allowed_;
  std::vector<std::unique_ptr<tools::EchoBackend>> backends_;
  std::shared_ptr<StaticDiscovery> discovery_;
  std::unique_ptr<Mesh> mesh_;
  std::string port_;
};

TEST_F(AdminTlsTest, AnAllowedIdentityIsServed) {
  Fetched health = Fetch("127.0.0.1", port_, "/healthz", As(&allowed_));
  ASSERT_EQ(health.code, CURLE_OK) << health.error;
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  auto channel = mesh_->NewChannel(kTarget);
  ASSERT_TRUE(channel.ok());
  ASSERT_TRUE((*channel)->CallRaw("/test.Echo/Say", "hi").status.ok());
  Fetched describe = Fetch("127.0.0.1", port_, "/describe", As(&allowed_));
  EXPECT_EQ(describe.status, 200);
  EXPECT_TRUE(absl::StrContains(describe.body, kTarget)) << describe.body;
}

TEST_F(AdminTlsTest, AnIdentityNotAllowedIsRefusedNamingIt) {
  auto other =
      pki_->Issue("other", WithSans({"URI:spiffe://mesh.test/ns/shop/sa/web"}));
  ASSERT_TRUE(other.ok());
  Fetched refused = Fetch("127.0.0.1", port_, "/healthz", As(&*other));
  ASSERT_EQ(refused.code, CURLE_OK) << refused.error;
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(absl::StrContains(
      refused.body,
      "peer 127.0.0.1: identity spiffe://mesh.test/ns/shop/sa/web, other is "
      "not allowed to see the admin page"))
      << refused.body;
}

TEST_F(AdminTlsTest, AClientWithoutACertificateIsRefused) {
  Fetched refused = Fetch("127.0.0.1", port_, "/metrics", As(nullptr));
  ASSERT_EQ(refused.code, CURLE_OK) << refused.error;
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(
      absl::StrContains(refused.body, "presented no client certificate"))
      << refused.body;
}

TEST_F(AdminTlsTest, ACertificateOfAnotherCaIsRefusedSayingWhy) {
  auto stranger_pki = TestPki::Create("stranger-ca");
  ASSERT_TRUE(stranger_pki.ok());
  // The allowed identity itself, from a CA the page does not trust.
  auto stranger =
      (*stranger_pki)
          ->Issue("stranger", WithSans({absl::StrCat("URI:", kAllowed)}));
  ASSERT_TRUE(stranger.ok());
  Fetched refused = Fetch("127.0.0.1", port_, "/healthz", As(&*stranger));
  ASSERT_EQ(refused.code, CURLE_OK) << refused.error;
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(
      absl::StrContains(refused.body, "its client certificate is refused"))
      << refused.body;
  EXPECT_TRUE(absl::StrContains(refused.body, "issuer is unknown"))
      << refused.body;
}

TEST_F(AdminTlsTest, AnExpiredCertificateIsRefusedSayingSo) {
  LeafOptions expired = WithSans({absl::StrCat("URI:", kAllowed)});
  expired.expired = true;
  auto old = pki_->Issue("old", expired);
  ASSERT_TRUE(old.ok());
  Fetched refused = Fetch("127.0.0.1", port_, "/healthz", As(&*old));
  ASSERT_EQ(refused.code, CURLE_OK) << refused.error;
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(absl::StrContains(refused.body, "expired")) << refused.body;
}

TEST_F(AdminTlsTest, PlainHttpGetsNoPage) {
  testing::HttpAnswer plain = testing::HttpGet(
      absl::StrCat("127.0.0.1:", port_), "/healthz", "GET", absl::Seconds(3));
  EXPECT_NE(plain.status, 200);
  EXPECT_FALSE(absl::StrContains(plain.body, "ok")) << plain.body;
}

// The tap stream over TLS: the subscription is live ("event: ready"), then
// a call's events arrive on it.
struct TapRead {
  Channel* channel = nullptr;
  std::string seen;
  bool called = false;
};

size_t ReadTap(char* data, size_t size, size_t count, void* out) {
  auto* read = static_cast<TapRead*>(out);
  read->seen.append(data, size * count);
  if (!read->called && absl::StrContains(read->seen, "event: ready")) {
    read->called = true;
    read->channel->CallRaw("/test.Echo/Say", "tapped");
  }
  // Enough once the call's path is in an event: stop the transfer.
  if (absl::StrContains(read->seen, "/test.Echo/Say")) return 0;
  return size * count;
}

TEST_F(AdminTlsTest, ATapStreamIsServedOverTls) {
  auto channel = mesh_->NewChannel(kTarget);
  ASSERT_TRUE(channel.ok());
  TapRead read;
  read.channel = channel->get();
  curl_slist* resolve = nullptr;
  CURL* easy = NewHandle("127.0.0.1", port_, "/tap?authority=books",
                         As(&allowed_), &resolve);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &ReadTap);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &read);
  const CURLcode code = curl_easy_perform(easy);
  curl_easy_cleanup(easy);
  curl_slist_free_all(resolve);
  // Ended by the reader (a write error), not by a timeout.
  EXPECT_EQ(code, CURLE_WRITE_ERROR) << curl_easy_strerror(code);
  EXPECT_TRUE(read.called);
  EXPECT_TRUE(absl::StrContains(read.seen, "data: {")) << read.seen;
  EXPECT_TRUE(absl::StrContains(read.seen, "/test.Echo/Say")) << read.seen;
}

TEST_F(AdminTlsTest, AnAllowedIdentityIsServedFromAnotherHost) {
  const std::string own = testing::NonLoopbackAddress();
  if (own.empty()) {
    GTEST_SKIP() << "this host has no IPv4 address but loopback";
  }
  // Listening everywhere; connecting to the host's own address, the peer is
  // that address, which the loopback rule would refuse.
  mesh_.reset();
  auto mesh = Mesh::Create(Options("0.0.0.0:0"));
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  const std::string address = (*mesh)->AdminAddress();
  const std::string port = address.substr(address.rfind(':') + 1);
  Fetched served = Fetch(own, port, "/healthz", As(&allowed_));
  ASSERT_EQ(served.code, CURLE_OK) << served.error;
  EXPECT_EQ(served.status, 200) << served.body;
  auto other =
      pki_->Issue("other", WithSans({"URI:spiffe://mesh.test/ns/shop/sa/web"}));
  ASSERT_TRUE(other.ok());
  Fetched refused = Fetch(own, port, "/healthz", As(&*other));
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(absl::StrContains(refused.body, absl::StrCat("peer ", own, ":")))
      << refused.body;
}

// MeshOptions::admin_tls that cannot work is refused naming the field.
TEST_F(AdminTlsTest, OptionsThatCannotWorkAreRefusedNamingTheField) {
  struct Case {
    const char* what;
    MeshOptions options;
    const char* message;
  };
  std::vector<Case> cases;
  cases.push_back({"no address", Options(""),
                   "MeshOptions.admin_tls is set but "
                   "MeshOptions.admin_address is empty"});
  cases.push_back({"no CA", Options("127.0.0.1:0"),
                   "MeshOptions.admin_tls.client_ca_pem is required with TLS"});
  cases.back().options.admin_tls.client_ca_pem.clear();
  cases.push_back({"no identities", Options("127.0.0.1:0"),
                   "MeshOptions.admin_tls.allowed_identities must not be "
                   "empty"});
  cases.back().options.admin_tls.allowed_identities.clear();
  cases.push_back({"no key", Options("127.0.0.1:0"),
                   "MeshOptions.admin_tls.private_key_pem is required"});
  cases.back().options.admin_tls.private_key_pem.clear();
  cases.push_back({"the key of another certificate", Options("127.0.0.1:0"),
                   "MeshOptions.admin_tls: "});
  cases.back().options.admin_tls.private_key_pem = allowed_.key;
  cases.push_back({"a CA that is not PEM", Options("127.0.0.1:0"),
                   "MeshOptions.admin_tls.client_ca_pem: "});
  cases.back().options.admin_tls.client_ca_pem = "not a certificate";
  for (const Case& c : cases) {
    auto mesh = Mesh::Create(c.options);
    ASSERT_FALSE(mesh.ok()) << c.what;
    EXPECT_EQ(mesh.status().code(), absl::StatusCode::kInvalidArgument)
        << c.what;
    EXPECT_TRUE(absl::StrContains(mesh.status().message(), c.message))
        << c.what << ": " << mesh.status();
  }
}

}  // namespace
}  // namespace mesh
