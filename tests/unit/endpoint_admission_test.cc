// Endpoint admission: which endpoints of an update a destination takes
// under the Mesh's identity settings and transport.
#include "src/channel/endpoint_admission.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Endpoint WithIdentity(const std::string& address, const std::string& id) {
  Endpoint e(address);
  e.tls_identity = id;
  return e;
}

std::shared_ptr<const EndpointTls> TlsWithServerName(
    ServerNameMatcher::Kind kind, const std::string& value) {
  auto tls = std::make_shared<EndpointTls>();
  // Valid as an endpoint's TLS: roots to verify with (never read here).
  tls->certificates.trust_roots_pem = "roots";
  ServerNameMatcher m;
  m.kind = kind;
  m.value = value;
  tls->server_names.push_back(m);
  return tls;
}

TEST(EndpointAdmissionTest, WithoutRequirementsTheUpdateIsTakenAsItCame) {
  AdmittedUpdate a = AdmitEndpoints(
      EndpointUpdate::Reset(
          {Endpoint("10.0.0.1:80"), WithIdentity("10.0.0.2:80", "b.ns.sa")}),
      DestinationTls{});
  EXPECT_TRUE(a.rejected.ok());
  EXPECT_FALSE(a.filtered);
  EXPECT_TRUE(a.left_out.empty());
}

TEST(EndpointAdmissionTest, RequireIdentityLeavesOutEndpointsWithoutOne) {
  DestinationTls tls;
  tls.identity_in_use = true;
  tls.require_identity = true;
  AdmittedUpdate a = AdmitEndpoints(
      EndpointUpdate::Reset({Endpoint("10.0.0.1:80"),
                             WithIdentity("10.0.0.2:80", "b.ns.sa"),
                             Endpoint("10.0.0.3:80")}),
      tls);
  ASSERT_TRUE(a.rejected.ok());
  ASSERT_TRUE(a.filtered);
  ASSERT_EQ(a.kept.endpoints.size(), 1u);
  EXPECT_EQ(a.kept.endpoints[0].address, "10.0.0.2:80");
  EXPECT_EQ(a.kept.kind, EndpointUpdate::Kind::kReset);
  EXPECT_THAT(a.left_out, ElementsAre("10.0.0.1:80", "10.0.0.3:80"));
  EXPECT_THAT(a.why, HasSubstr("2 endpoint(s) without a TLS identity"));
  EXPECT_THAT(a.why, HasSubstr("require_identity"));
  EXPECT_THAT(a.why, HasSubstr("e.g. 10.0.0.1:80"));
}

TEST(EndpointAdmissionTest, AnApplicationTransportLeavesOutControlPlaneTls) {
  DestinationTls tls;
  tls.default_transport = false;
  Endpoint with_tls("10.0.0.1:80");
  with_tls.tls =
      TlsWithServerName(ServerNameMatcher::Kind::kExact, "books.test");
  AdmittedUpdate a = AdmitEndpoints(
      EndpointUpdate::Add({with_tls, Endpoint("10.0.0.2:80")}), tls);
  ASSERT_TRUE(a.filtered);
  ASSERT_EQ(a.kept.endpoints.size(), 1u);
  EXPECT_EQ(a.kept.endpoints[0].address, "10.0.0.2:80");
  EXPECT_EQ(a.kept.kind, EndpointUpdate::Kind::kAdd);
  EXPECT_THAT(a.why, HasSubstr("would call them in plaintext"));
}

TEST(EndpointAdmissionTest, AServerNameMatcherThatCannotWorkRejectsTheUpdate) {
  Endpoint bad("10.0.0.7:80");
  bad.tls = TlsWithServerName(ServerNameMatcher::Kind::kRegex, "(unclosed");
  AdmittedUpdate a = AdmitEndpoints(
      EndpointUpdate::Reset({Endpoint("10.0.0.1:80"), bad}), DestinationTls{});
  EXPECT_EQ(a.rejected.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(a.rejected.message()),
              HasSubstr("endpoint '10.0.0.7:80': tls.server_names"));
}

TEST(EndpointAdmissionTest, RemovalsAndInvalidListsPassToTheSetUnfiltered) {
  DestinationTls tls;
  tls.require_identity = true;
  AdmittedUpdate removal =
      AdmitEndpoints(EndpointUpdate::Remove({"10.0.0.1:80"}), tls);
  EXPECT_TRUE(removal.rejected.ok());
  EXPECT_FALSE(removal.filtered);
  // The set rejects it, naming the address: admission leaves that to it.
  AdmittedUpdate invalid =
      AdmitEndpoints(EndpointUpdate::Reset({Endpoint("not an address")}), tls);
  EXPECT_TRUE(invalid.rejected.ok());
  EXPECT_FALSE(invalid.filtered);
}

}  // namespace
}  // namespace mesh::internal
