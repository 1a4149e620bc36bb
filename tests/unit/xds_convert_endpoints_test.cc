// ClusterLoadAssignments from the wire (src/discovery/xds/xds_convert.h):
// priorities, localities, health, drop overloads, limits; every refusal
// with the field path and the problem it names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "src/discovery/xds/xds_client.h"
#include "src/discovery/xds/xds_convert.h"
#include "tests/support/xds_convert_fixtures.h"

namespace mesh::internal::xds {
namespace {

using namespace fixtures;  // NOLINT: the shared helpers, types, matchers
using envoy::config::endpoint::v3::ClusterLoadAssignment;

// --- ClusterLoadAssignment ---------------------------------------------------

std::string EndpointsError(absl::string_view text) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(text));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

// An lb_endpoints entry for `ip`:`port`.
std::string At(absl::string_view ip, int port, absl::string_view more = "") {
  return absl::StrCat(
      "lb_endpoints { endpoint { address { socket_address { "
      "address: \"",
      ip, "\" port_value: ", port, " } } } ", more, " }");
}

Endpoint Labelled(std::string address, uint32_t weight,
                  std::map<std::string, std::string> labels) {
  Endpoint e(std::move(address), weight);
  e.labels = std::move(labels);
  return e;
}

TEST(ConvertClusterLoadAssignment, PrioritiesLocalitiesAndHealth) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(absl::StrCat(
          "cluster_name: \"echo\" "
          "endpoints { locality { region: \"eu\" zone: \"eu-b\" } priority: 1 "
          "  load_balancing_weight { value: 3 } ",
          At("10.0.0.3", 7000), " } ",
          "endpoints { locality { region: \"eu\" zone: \"eu-a\" sub_zone: "
          "\"r1\" } load_balancing_weight { value: 2 } ",
          At("10.0.0.1", 7000, "load_balancing_weight { value: 5 }"),
          At("10.0.0.2", 7000, "health_status: HEALTHY"),
          At("10.0.0.9", 7000, "health_status: UNHEALTHY"),
          At("10.0.0.8", 7000, "health_status: DRAINING"),
          At("not-an-ip", 0, "health_status: TIMEOUT"), " } ",
          "endpoints { priority: 1 load_balancing_weight { value: 1 } ",
          At("fd00::7", 8443, "health_status: UNKNOWN"), " }")));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->cluster_name, "echo");
  ASSERT_EQ(e->localities.size(), 3u);
  const LocalityEndpoints& a = e->localities[0];
  EXPECT_EQ(a.region, "eu");
  EXPECT_EQ(a.zone, "eu-a");
  EXPECT_EQ(a.sub_zone, "r1");
  EXPECT_EQ(a.weight, 2u);
  EXPECT_EQ(a.priority, 0u);
  EXPECT_EQ(a.unhealthy, 3u);
  EXPECT_THAT(a.endpoints, ElementsAre(Endpoint("10.0.0.1:7000", 5),
                                       Endpoint("10.0.0.2:7000", 1)));
  // Served, they carry their locality's names as labels.
  const std::map<std::string, std::string> a_labels = {
      {"region", "eu"}, {"zone", "eu-a"}, {"sub_zone", "r1"}};
  EXPECT_THAT(EndpointsToServe(*e),
              ElementsAre(Labelled("10.0.0.1:7000", 5, a_labels),
                          Labelled("10.0.0.2:7000", 1, a_labels)));
  const LocalityEndpoints& b = e->localities[1];
  EXPECT_EQ(b.zone, "eu-b");
  EXPECT_EQ(b.sub_zone, "");
  EXPECT_EQ(b.weight, 3u);
  EXPECT_EQ(b.priority, 1u);
  EXPECT_EQ(b.unhealthy, 0u);
  EXPECT_THAT(b.endpoints, ElementsAre(Endpoint("10.0.0.3:7000", 1)));
  const LocalityEndpoints& c = e->localities[2];
  EXPECT_EQ(c.region, "");
  EXPECT_EQ(c.priority, 1u);
  EXPECT_THAT(c.endpoints, ElementsAre(Endpoint("[fd00::7]:8443", 1)));
  EXPECT_THAT(e->drop_overloads, IsEmpty());
}

TEST(ConvertClusterLoadAssignment, LocalityWithoutWeightIsLeftOutUnread) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(absl::StrCat(
          "endpoints { locality { zone: \"none\" } ", At("10.0.0.1", 0), " } ",
          "endpoints { locality { zone: \"zero\" } load_balancing_weight {} ",
          At("10.0.0.1", 1), " } ",
          "endpoints { locality { zone: \"kept\" } load_balancing_weight { "
          "value: 1 } ",
          At("10.0.0.1", 1), " } ",
          "endpoints { priority: 1 load_balancing_weight { value: 0 } ",
          At("10.0.0.5", 5), " }")));
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->localities.size(), 1u);
  EXPECT_EQ(e->localities[0].zone, "kept");
}

TEST(ConvertClusterLoadAssignment, PriorityGapIsRefused) {
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { load_balancing_weight { value: 1 } ", At("10.0.0.1", 1),
          " } endpoints { priority: 1 ", At("10.0.0.2", 1),
          " } endpoints { priority: 2 load_balancing_weight { value: 1 } ",
          At("10.0.0.3", 1), " }")),
      HasSubstr("endpoints[2].priority: 2 leaves a gap: priority 1 has no "
                "locality with a weight"));
  EXPECT_THAT(EndpointsError(absl::StrCat(
                  "endpoints { priority: 1 load_balancing_weight { value: 1 } ",
                  At("10.0.0.1", 1), " }")),
              HasSubstr("endpoints[0].priority: 1 leaves a gap: priority 0"));
}

TEST(ConvertClusterLoadAssignment, EndpointRefusals) {
  const std::pair<std::string, absl::string_view> cases[] = {
      {At("10.0.0.1", 0),
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address."
       "port_value: 0 is outside 1..65535"},
      {At("10.0.0.1", 65536),
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address."
       "port_value: 65536 is outside"},
      {At("echo.local", 7000),
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address: "
       "'echo.local' is not an IP address"},
      {"lb_endpoints { endpoint { address {} } }",
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address: "
       "missing"},
      {"lb_endpoints {}", "endpoints[0].lb_endpoints[0].endpoint: missing"},
      {At("10.0.0.1", 1, "load_balancing_weight { value: 0 }"),
       "endpoints[0].lb_endpoints[0].load_balancing_weight: must be at least "
       "1"},
      {absl::StrCat(At("10.0.0.1", 1), At("10.0.0.2", 1), At("10.0.0.1", 1)),
       "endpoints[0].lb_endpoints[2].endpoint.address: duplicate endpoint "
       "address 10.0.0.1:1"},
      {absl::StrCat(At("10.0.0.1", 1,
                       "load_balancing_weight { value: "
                       "4294967295 }"),
                    At("10.0.0.2", 1)),
       "endpoints[0].lb_endpoints: the endpoint weights add up to more than "
       "2^32 - 1"},
  };
  for (const auto& [endpoints, problem] : cases) {
    EXPECT_THAT(EndpointsError(absl::StrCat(
                    "endpoints { load_balancing_weight { value: 1 } ",
                    endpoints, " }")),
                HasSubstr(problem))
        << endpoints;
  }
}

TEST(ConvertClusterLoadAssignment, SameAddressInTwoPrioritiesIsRefused) {
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { load_balancing_weight { value: 1 } ", At("fd00::1", 80),
          " } endpoints { priority: 1 ", "load_balancing_weight { value: 1 } ",
          At("FD00:0::1", 80), " }")),
      HasSubstr("endpoints[1].lb_endpoints[0].endpoint.address: duplicate "
                "endpoint address [fd00::1]:80"));
}

TEST(ConvertClusterLoadAssignment, LocalityRefusals) {
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { locality { zone: \"a\" } load_balancing_weight { value: "
          "1 } ",
          At("10.0.0.1", 1), " } endpoints { locality { zone: \"a\" } ",
          "load_balancing_weight { value: 1 } ", At("10.0.0.2", 1), " }")),
      HasSubstr("endpoints[1].locality: duplicate locality {region '', zone "
                "'a', sub_zone ''} in priority 0"));
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { locality { zone: \"a\" } load_balancing_weight { value: "
          "4294967295 } ",
          At("10.0.0.1", 1), " } endpoints { locality { zone: \"b\" } ",
          "load_balancing_weight { value: 1 } ", At("10.0.0.2", 1), " }")),
      HasSubstr("endpoints[1].load_balancing_weight: the locality weights of "
                "priority 0 add up to more than 2^32 - 1"));
}

TEST(ConvertClusterLoadAssignment, DropOverloads) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(
          "policy { drop_overloads { category: \"lb\" drop_percentage { "
          "numerator: 5 } } drop_overloads { category: \"throttle\" "
          "drop_percentage { numerator: 25 denominator: TEN_THOUSAND } } "
          "drop_overloads { category: \"all\" drop_percentage { numerator: "
          "2000000 denominator: MILLION } } }"));
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->drop_overloads.size(), 3u);
  EXPECT_EQ(e->drop_overloads[0].category, "lb");
  EXPECT_EQ(e->drop_overloads[0].per_million, 50'000u);
  EXPECT_EQ(e->drop_overloads[1].category, "throttle");
  EXPECT_EQ(e->drop_overloads[1].per_million, 2'500u);
  EXPECT_EQ(e->drop_overloads[2].per_million, 1'000'000u);
  EXPECT_THAT(e->localities, IsEmpty());

  EXPECT_THAT(
      EndpointsError("policy { drop_overloads { drop_percentage {} } }"),
      HasSubstr("policy.drop_overloads[0].category: empty"));
  EXPECT_THAT(EndpointsError("policy { drop_overloads { category: \"x\" } }"),
              HasSubstr("policy.drop_overloads[0].drop_percentage: missing"));
  EXPECT_THAT(EndpointsError("policy { drop_overloads { category: \"x\" "
                             "drop_percentage { denominator: 3 } } }"),
              HasSubstr("policy.drop_overloads[0].drop_percentage.denominator: "
                        "unknown value 3"));
}

TEST(ConvertClusterLoadAssignment, AtMost100000Endpoints) {
  ClusterLoadAssignment cla;
  auto* locality = cla.add_endpoints();
  locality->mutable_load_balancing_weight()->set_value(1);
  for (int i = 0; i < 100'001; ++i) locality->add_lb_endpoints();
  absl::StatusOr<EndpointsResource> e = ConvertClusterLoadAssignment(cla);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(),
              HasSubstr("endpoints: 100001 endpoints, more than 100000"));
}

}  // namespace
}  // namespace mesh::internal::xds
