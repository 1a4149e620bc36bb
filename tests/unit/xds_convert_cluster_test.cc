// Clusters from the wire (src/discovery/xds/xds_convert.h): EDS and DNS
// discovery, load-balancing policies, circuit breakers, outlier detection
// and what the balancers get of it; every refusal with the field path and
// the problem it names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "src/discovery/xds/xds_client.h"
#include "src/discovery/xds/xds_convert.h"
#include "tests/support/xds_convert_fixtures.h"

namespace mesh::internal::xds {
namespace {

using namespace fixtures;  // NOLINT: the shared helpers, types, matchers

TEST(ConvertCluster, EdsDefaults) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(""));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "outbound|7000||echo");
  EXPECT_EQ(c->eds_service_name, "outbound|7000||echo");
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRoundRobin);
  EXPECT_EQ(c->max_requests, 1024u);
  EXPECT_FALSE(c->outlier_detection.has_value());

  c = ConvertCluster(Parse<Cluster>(
      "name: \"c\" type: EDS eds_cluster_config { eds_config { self {} } "
      "service_name: \"echo-eds\" }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->eds_service_name, "echo-eds");
}

TEST(ConvertCluster, RingHashSizes) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(EdsCluster("lb_policy: RING_HASH"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRingHash);
  EXPECT_EQ(c->min_ring_size, 1024u);
  EXPECT_EQ(c->max_ring_size, 8'388'608u);

  c = ConvertCluster(EdsCluster(
      "lb_policy: RING_HASH ring_hash_lb_config { minimum_ring_size { value: "
      "10 } maximum_ring_size { value: 4096 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->min_ring_size, 10u);
  EXPECT_EQ(c->max_ring_size, 4096u);

  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"minimum_ring_size { value: 0 }",
       "ring_hash_lb_config.minimum_ring_size: 0 is outside [1, 8388608]"},
      {"maximum_ring_size { value: 8388609 }",
       "ring_hash_lb_config.maximum_ring_size: 8388609 is outside [1, "
       "8388608]"},
      {"minimum_ring_size { value: 100 } maximum_ring_size { value: 99 }",
       "ring_hash_lb_config.minimum_ring_size: 100 is above the maximum ring "
       "size 99"},
      {"maximum_ring_size { value: 512 }",
       "ring_hash_lb_config.minimum_ring_size: 1024 is above the maximum ring "
       "size 512"},
      {"hash_function: MURMUR_HASH_2",
       "ring_hash_lb_config.hash_function: MURMUR_HASH_2 is not supported"},
  };
  for (const auto& [config, problem] : cases) {
    EXPECT_THAT(
        ClusterError(EdsCluster(absl::StrCat(
            "lb_policy: RING_HASH ring_hash_lb_config { ", config, " }"))),
        HasSubstr(problem))
        << config;
  }
}

TEST(ConvertCluster, LeastRequest) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "lb_policy: LEAST_REQUEST least_request_lb_config { choice_count { "
      "value: 2 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kLeastRequest);
  EXPECT_THAT(ClusterError(EdsCluster(
                  "lb_policy: LEAST_REQUEST least_request_lb_config { "
                  "choice_count { value: 1 } }")),
              HasSubstr("least_request_lb_config.choice_count: must be at "
                        "least 2"));
}

TEST(ConvertCluster, OtherLbPoliciesAreRefused) {
  for (absl::string_view policy : {"RANDOM", "MAGLEV", "CLUSTER_PROVIDED",
                                   "LOAD_BALANCING_POLICY_CONFIG"}) {
    EXPECT_THAT(
        ClusterError(EdsCluster(absl::StrCat("lb_policy: ", policy))),
        HasSubstr(absl::StrCat("lb_policy: ", policy, " is not supported")));
  }
}

TEST(ConvertCluster, LoadBalancingPolicyGivesWayToLbPolicy) {
  // Envoy: load_balancing_policy supersedes lb_policy for a client that
  // supports it; mesh does not.
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      EdsCluster("lb_policy: RING_HASH load_balancing_policy {}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRingHash);
}

TEST(ConvertCluster, DiscoveryTypeRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"type: STATIC", "type: STATIC clusters are not supported"},
      {"type: ORIGINAL_DST", "type: ORIGINAL_DST clusters are not supported"},
      {"", "type: unset (STATIC) clusters are not supported"},
      {"cluster_type { name: \"envoy.clusters.aggregate\" typed_config { "
       "type_url: "
       "\"type.googleapis.com/envoy.extensions.clusters.aggregate.v3."
       "ClusterConfig\" } }",
       "cluster_type: custom cluster type 'envoy.clusters.aggregate' "
       "(envoy.extensions.clusters.aggregate.v3.ClusterConfig) is not "
       "supported"},
  };
  for (const auto& [type, problem] : cases) {
    EXPECT_THAT(ClusterError(Parse<Cluster>(absl::StrCat(
                    "name: \"c\" ", type,
                    " eds_cluster_config { eds_config { ads {} } }"))),
                HasSubstr(problem))
        << type;
  }
}

TEST(ConvertCluster, EdsConfigRefusals) {
  EXPECT_THAT(ClusterError(Parse<Cluster>("name: \"c\" type: EDS")),
              HasSubstr("eds_cluster_config: missing"));
  EXPECT_THAT(ClusterError(Parse<Cluster>(
                  "name: \"c\" type: EDS eds_cluster_config {}")),
              HasSubstr("eds_cluster_config.eds_config: missing"));
  EXPECT_THAT(
      ClusterError(Parse<Cluster>(
          "name: \"c\" type: EDS eds_cluster_config { eds_config {} }")),
      HasSubstr("eds_cluster_config.eds_config: must be ads or self"));
}

TEST(ConvertCluster, LogicalDnsResolvesItsOneHost) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      DnsCluster("LOGICAL_DNS", Locality(Host("echo.mesh.test", 7001))));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->discovery, ClusterResource::Discovery::kLogicalDns);
  ASSERT_EQ(c->dns_hosts.size(), 1u);
  EXPECT_EQ(c->dns_hosts[0].host, "echo.mesh.test");
  EXPECT_EQ(c->dns_hosts[0].port, 7001);
  EXPECT_EQ(c->dns_hosts[0].weight, 1u);
  EXPECT_EQ(c->dns_hosts[0].Target(), "echo.mesh.test:7001");
  // No EDS for it: no eds_cluster_config needed, and one given is not read.
  EXPECT_EQ(c->eds_service_name, "");
  c = ConvertCluster(DnsCluster(
      "LOGICAL_DNS", Locality(Host("::1", 80)),
      "eds_cluster_config { eds_config { ads {} } service_name: \"x\" }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->eds_service_name, "");
  EXPECT_EQ(c->dns_hosts[0].Target(), "[::1]:80");
}

TEST(ConvertCluster, LogicalDnsRefusalsNameTheirField) {
  const std::string one = Locality(Host("echo.mesh.test", 7001));
  const std::string lb0 = "load_assignment.endpoints[0].lb_endpoints[0]";
  const std::string socket = lb0 + ".endpoint.address.socket_address";
  struct Case {
    std::string assignment;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"",
       "load_assignment.endpoints: 0 localities: a LOGICAL_DNS cluster "
       "has exactly one"},
      {one + one,
       "load_assignment.endpoints: 2 localities: a LOGICAL_DNS cluster has "
       "exactly one"},
      {Locality(Host("a.mesh.test", 1) + Host("b.mesh.test", 1)),
       "load_assignment.endpoints[0].lb_endpoints: 2 lb_endpoints: a "
       "LOGICAL_DNS cluster has exactly one"},
      {Locality(""),
       "load_assignment.endpoints: no lb_endpoints: a LOGICAL_DNS cluster "
       "needs a host to resolve"},
      {Locality(Host("echo.mesh.test", 7001), "priority: 1"),
       "load_assignment.endpoints[0].priority: 1: priorities are not "
       "supported for DNS clusters"},
      {Locality("lb_endpoints {}"), lb0 + ".endpoint: missing"},
      {Locality("lb_endpoints { endpoint { address {} } }"),
       socket + ": missing: a DNS cluster resolves a name and a port"},
      {Locality(Host("", 7001)), socket + ".address: empty"},
      {Locality(Host("bad name.test", 7001)),
       socket + ".address: 'bad name.test' is neither a DNS name nor an IP "
                "address"},
      {Locality(Host("a..b", 7001)), socket + ".address: 'a..b' is neither"},
      {Locality(Host("echo.mesh.test", 0)),
       socket + ".port_value: 0 is outside 1..65535"},
      {Locality(Host("echo.mesh.test", 70000)),
       socket + ".port_value: 70000 is outside 1..65535"},
      {Locality("lb_endpoints { endpoint { address { socket_address { "
                "address: \"echo.mesh.test\" named_port: \"http\" } } } }"),
       socket + ".named_port: not supported: give a port_value"},
      {Locality("lb_endpoints { endpoint { address { socket_address { "
                "address: \"echo.mesh.test\" port_value: 80 resolver_name: "
                "\"consul\" } } } }"),
       socket + ".resolver_name: 'consul': a DNS cluster resolves through "
                "DNS only"},
      {Locality(
           Host("echo.mesh.test", 80, "load_balancing_weight { value: 0 }")),
       lb0 + ".load_balancing_weight: must be at least 1"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ClusterError(DnsCluster("LOGICAL_DNS", c.assignment)),
                HasSubstr(c.error))
        << c.assignment;
  }
  EXPECT_THAT(ClusterError(Parse<Cluster>("name: \"c\" type: LOGICAL_DNS")),
              HasSubstr("load_assignment: missing: a LOGICAL_DNS cluster "
                        "resolves the hosts it names"));
}

TEST(ConvertCluster, DnsLookupFamilyIsRead) {
  using Family = ClusterResource::DnsFamily;
  const std::string one = Locality(Host("echo.mesh.test", 7001));
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(DnsCluster("STRICT_DNS", one));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dns_family, Family::kAuto);  // the field's default
  const std::vector<std::pair<std::string, Family>> cases = {
      {"AUTO", Family::kAuto},
      {"V4_ONLY", Family::kV4Only},
      {"V6_ONLY", Family::kV6Only},
      {"V4_PREFERRED", Family::kV4Preferred},
      {"ALL", Family::kAll}};
  for (const auto& [name, family] : cases) {
    c = ConvertCluster(
        DnsCluster("LOGICAL_DNS", one, "dns_lookup_family: " + name));
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->dns_family, family) << name;
  }
  // A value this API does not know (an open enum keeps it) is refused.
  EXPECT_THAT(
      ClusterError(DnsCluster("STRICT_DNS", one, "dns_lookup_family: 9")),
      HasSubstr("dns_lookup_family: 9 is not a known "
                "DnsLookupFamily"));
}

TEST(ConvertCluster, StrictDnsResolvesEveryHostWithItsWeight) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(DnsCluster(
      "STRICT_DNS",
      Locality(Host("a.mesh.test", 7001, "load_balancing_weight { value: 3 }") +
               Host("b.mesh.test", 7002)) +
          Locality(Host("10.0.0.9", 7001, "load_balancing_weight { value: 2 }"),
                   "locality { zone: \"z2\" }") +
          // Left out for its health, as in EDS.
          Locality(Host("c.mesh.test", 7001, "health_status: UNHEALTHY"))));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->discovery, ClusterResource::Discovery::kStrictDns);
  std::vector<std::string> hosts;
  for (const DnsHost& h : c->dns_hosts) {
    hosts.push_back(absl::StrCat(h.Target(), " w", h.weight));
  }
  EXPECT_THAT(hosts, ElementsAre("a.mesh.test:7001 w3", "b.mesh.test:7002 w1",
                                 "10.0.0.9:7001 w2"));
}

TEST(ConvertCluster, StrictDnsRefusals) {
  // 101 hosts over two localities.
  std::string many;
  for (int i = 0; i < 60; ++i) {
    absl::StrAppend(&many, Host(absl::StrCat("h", i, ".mesh.test"), 80));
  }
  std::string more;
  for (int i = 60; i < 101; ++i) {
    absl::StrAppend(&more, Host(absl::StrCat("h", i, ".mesh.test"), 80));
  }
  EXPECT_THAT(
      ClusterError(DnsCluster("STRICT_DNS", Locality(many) + Locality(more))),
      HasSubstr("load_assignment.endpoints: 101 hosts, more than 100"));
  // 100 are fine.
  more.clear();
  for (int i = 60; i < 100; ++i) {
    absl::StrAppend(&more, Host(absl::StrCat("h", i, ".mesh.test"), 80));
  }
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(DnsCluster("STRICT_DNS", Locality(many) + Locality(more)));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dns_hosts.size(), 100u);

  const std::pair<std::string, std::string> cases[] = {
      {Locality(Host("a.mesh.test", 80)) +
           Locality(Host("b.mesh.test", 80), "priority: 1"),
       "load_assignment.endpoints[1].priority: 1: priorities are not "
       "supported for DNS clusters"},
      {Locality(Host("a.mesh.test", 80) + Host("a.mesh.test", 80)),
       "load_assignment.endpoints[0].lb_endpoints[1].endpoint.address: "
       "duplicate host a.mesh.test:80"},
      {Locality(Host("a.mesh.test", 80) + Host("b.mesh.test", 0)),
       "load_assignment.endpoints[0].lb_endpoints[1].endpoint.address."
       "socket_address.port_value: 0 is outside 1..65535"},
      {Locality(Host("a.mesh.test", 80) +
                "lb_endpoints { endpoint { address { socket_address { "
                "address: \"b.mesh.test\" named_port: \"http\" } } } }"),
       "lb_endpoints[1].endpoint.address.socket_address.named_port: not "
       "supported"},
      {"",
       "load_assignment.endpoints: no lb_endpoints: a STRICT_DNS cluster "
       "needs a host to resolve"},
  };
  for (const auto& [assignment, error] : cases) {
    EXPECT_THAT(ClusterError(DnsCluster("STRICT_DNS", assignment)),
                HasSubstr(error))
        << assignment;
  }
}

TEST(ConvertCluster, DnsClustersConvertTheRestAsEdsClustersDo) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      DnsCluster("STRICT_DNS", Locality(Host("a.mesh.test", 80)),
                 "lb_policy: RING_HASH ring_hash_lb_config { "
                 "maximum_ring_size { value: 2048 } } circuit_breakers { "
                 "thresholds { max_requests { value: 7 } } } "
                 "outlier_detection { consecutive_5xx { value: 3 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRingHash);
  EXPECT_EQ(c->max_ring_size, 2048u);
  EXPECT_EQ(c->max_requests, 7u);
  ASSERT_TRUE(c->outlier_detection.has_value());
  EXPECT_EQ(c->outlier_detection->consecutive_5xx, 3u);
  EXPECT_THAT(
      ClusterError(DnsCluster("LOGICAL_DNS", Locality(Host("a.mesh.test", 80)),
                              "lb_policy: MAGLEV")),
      HasSubstr("lb_policy: MAGLEV is not supported"));
}

// The bootstrap's providers as Istio's agent writes them: "default" with
// all three files, "roots" with the CA only, "vault" another plugin.
TEST(ConvertCluster, CircuitBreakerTakesTheFirstDefaultThreshold) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "circuit_breakers { thresholds { priority: HIGH max_requests { value: 5 "
      "} } thresholds { max_requests { value: 7 } } thresholds { priority: "
      "DEFAULT max_requests { value: 9 } } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_requests, 7u);
  c = ConvertCluster(EdsCluster(
      "circuit_breakers { thresholds { priority: DEFAULT } thresholds { "
      "priority: DEFAULT max_requests { value: 9 } } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_requests, 1024u);
}

TEST(ConvertCluster, OutlierDetectionDefaults) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(EdsCluster("outlier_detection {}"));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->outlier_detection.has_value());
  const OutlierDetection& od = *c->outlier_detection;
  EXPECT_EQ(od.interval, absl::Seconds(10));
  EXPECT_EQ(od.base_ejection_time, absl::Seconds(30));
  EXPECT_EQ(od.max_ejection_time, absl::Seconds(300));
  EXPECT_EQ(od.max_ejection_percent, 10u);
  EXPECT_EQ(od.consecutive_5xx, 5u);
  EXPECT_EQ(od.enforcing_consecutive_5xx, 100u);
  // gRFC A50: enforcing_success_rate defaults to 100, so success-rate
  // ejection is on; enforcing_failure_percentage defaults to 0: off.
  ASSERT_TRUE(od.success_rate.has_value());
  EXPECT_EQ(od.success_rate->stdev_factor, 1900u);
  EXPECT_EQ(od.success_rate->enforcement_percentage, 100u);
  EXPECT_EQ(od.success_rate->minimum_hosts, 5u);
  EXPECT_EQ(od.success_rate->request_volume, 100u);
  EXPECT_FALSE(od.failure_percentage.has_value());
}

TEST(ConvertCluster, OutlierDetectionFields) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "outlier_detection { interval { seconds: 1 } base_ejection_time { "
      "seconds: 2 } max_ejection_time { seconds: 3 } max_ejection_percent { "
      "value: 50 } enforcing_success_rate { value: 0 } "
      "success_rate_stdev_factor { value: 1000 } "
      "enforcing_failure_percentage { value: 80 } "
      "failure_percentage_threshold { value: 60 } "
      "failure_percentage_minimum_hosts { value: 3 } "
      "failure_percentage_request_volume { value: 20 } "
      "consecutive_5xx { value: 7 } enforcing_consecutive_5xx { value: 0 } "
      "}"));
  ASSERT_TRUE(c.ok()) << c.status();
  const OutlierDetection& od = *c->outlier_detection;
  EXPECT_EQ(od.consecutive_5xx, 7u);
  EXPECT_EQ(od.enforcing_consecutive_5xx, 0u);
  EXPECT_EQ(od.interval, absl::Seconds(1));
  EXPECT_EQ(od.base_ejection_time, absl::Seconds(2));
  EXPECT_EQ(od.max_ejection_time, absl::Seconds(3));
  EXPECT_EQ(od.max_ejection_percent, 50u);
  EXPECT_FALSE(od.success_rate.has_value());
  ASSERT_TRUE(od.failure_percentage.has_value());
  EXPECT_EQ(od.failure_percentage->threshold, 60u);
  EXPECT_EQ(od.failure_percentage->enforcement_percentage, 80u);
  EXPECT_EQ(od.failure_percentage->minimum_hosts, 3u);
  EXPECT_EQ(od.failure_percentage->request_volume, 20u);

  c = ConvertCluster(EdsCluster(
      "outlier_detection { enforcing_success_rate { value: 40 } "
      "success_rate_stdev_factor { value: 1000 } success_rate_minimum_hosts { "
      "value: 2 } success_rate_request_volume { value: 10 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->outlier_detection->success_rate.has_value());
  EXPECT_EQ(c->outlier_detection->success_rate->enforcement_percentage, 40u);
  EXPECT_EQ(c->outlier_detection->success_rate->stdev_factor, 1000u);
  EXPECT_EQ(c->outlier_detection->success_rate->minimum_hosts, 2u);
  EXPECT_EQ(c->outlier_detection->success_rate->request_volume, 10u);
}

TEST(ConvertCluster, OutlierDetectionRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"max_ejection_percent { value: 101 }",
       "outlier_detection.max_ejection_percent: 101 is above 100"},
      {"enforcing_success_rate { value: 101 }",
       "outlier_detection.enforcing_success_rate: 101 is above 100"},
      {"enforcing_failure_percentage { value: 200 }",
       "outlier_detection.enforcing_failure_percentage: 200 is above 100"},
      {"enforcing_failure_percentage { value: 1 } "
       "failure_percentage_threshold { value: 101 }",
       "outlier_detection.failure_percentage_threshold: 101 is above 100"},
      {"interval { seconds: -1 }",
       "outlier_detection.interval.seconds: -1 is outside"},
      {"base_ejection_time { nanos: -1 }",
       "outlier_detection.base_ejection_time.nanos: -1 is outside"},
      {"max_ejection_time { seconds: 315576000001 }",
       "outlier_detection.max_ejection_time.seconds: 315576000001 is outside"},
      {"enforcing_consecutive_5xx { value: 101 }",
       "outlier_detection.enforcing_consecutive_5xx: 101 is above 100"},
      {"interval {}", "outlier_detection.interval: must be > 0"},
      {"base_ejection_time { seconds: 0 }",
       "outlier_detection.base_ejection_time: must be > 0"},
      {"max_ejection_time { nanos: 0 }",
       "outlier_detection.max_ejection_time: must be > 0"},
  };
  for (const auto& [od, problem] : cases) {
    EXPECT_THAT(ClusterError(
                    EdsCluster(absl::StrCat("outlier_detection { ", od, " }"))),
                HasSubstr(problem))
        << od;
  }
}

// What the balancers get of an outlier_detection (BackendPolicy::Ejection).
TEST(EjectionOf, EnvoysFieldsBecomeTheBalancersEjection) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "outlier_detection { interval { seconds: 4 } base_ejection_time { "
      "seconds: 60 } max_ejection_time { seconds: 20 } max_ejection_percent "
      "{ value: 30 } consecutive_5xx { value: 3 } "
      "enforcing_failure_percentage { value: 90 } "
      "failure_percentage_threshold { value: 70 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  BackendPolicy::Ejection e = EjectionOf(*c->outlier_detection);
  EXPECT_EQ(e.consecutive_failures, 3u);
  EXPECT_EQ(e.base, absl::Seconds(60));
  EXPECT_EQ(e.max, absl::Seconds(60));  // max below base: base
  EXPECT_DOUBLE_EQ(e.max_share, 0.3);
  EXPECT_EQ(e.interval.interval, absl::Seconds(4));
  ASSERT_TRUE(e.interval.success_rate.has_value());  // on by default
  EXPECT_EQ(e.interval.success_rate->stdev_factor, 1900u);
  ASSERT_TRUE(e.interval.failure_percentage.has_value());
  EXPECT_EQ(e.interval.failure_percentage->threshold, 70u);
  EXPECT_EQ(e.interval.failure_percentage->enforcement_percentage, 90u);
  EXPECT_EQ(e.interval.failure_percentage->minimum_hosts, 5u);
  EXPECT_EQ(e.interval.failure_percentage->request_volume, 50u);

  // enforcing_consecutive_5xx 0 turns consecutive failures off; Istio sends
  // it so for consecutive5xxErrors: 0.
  c = ConvertCluster(
      EdsCluster("outlier_detection { enforcing_consecutive_5xx { value: 0 } "
                 "enforcing_success_rate { value: 0 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  e = EjectionOf(*c->outlier_detection);
  EXPECT_EQ(e.consecutive_failures, 0u);
  EXPECT_EQ(e.max, absl::Seconds(300));
  EXPECT_FALSE(e.interval.success_rate.has_value());
  EXPECT_FALSE(e.interval.failure_percentage.has_value());
}

}  // namespace
}  // namespace mesh::internal::xds
