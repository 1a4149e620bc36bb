// RouteConfigurations converted by what calls reach
// (src/discovery/xds/xds_convert.h): only the chosen virtual hosts are
// converted, what every host is checked for at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_service_config.h"
#include "tests/support/xds_convert_fixtures.h"

namespace mesh::internal::xds {
namespace {

using namespace fixtures;  // NOLINT: the shared helpers, types, matchers

// --- RouteConfiguration converted by what a call reaches (RDS) -------------

// Three virtual hosts: "a" and "b" good, "bad" with a regex RE2 refuses.
RouteConfiguration ThreeHosts() {
  return Parse<RouteConfiguration>(R"pb(
    name: "routes"
    virtual_hosts {
      name: "a"
      domains: "a.test:80"
      routes {
        match { safe_regex { regex: "/a/.*" } }
        route { cluster: "ca" }
      }
    }
    virtual_hosts {
      name: "b"
      domains: "B.test:80"
      domains: "*.b.test"
      routes {
        match { prefix: "/" }
        route { cluster: "cb" }
      }
    }
    virtual_hosts {
      name: "bad"
      domains: "bad.test:80"
      routes {
        match { safe_regex { regex: "(" } }
        route { cluster: "cx" }
      }
    }
  )pb");
}

absl::StatusOr<RouteConfigResource> Lazily(const RouteConfiguration& config,
                                           std::vector<size_t> now,
                                           std::string* bytes) {
  *bytes = config.SerializeAsString();
  absl::StatusOr<RouteConfigurationSlices> slices =
      SliceRouteConfiguration(*bytes);
  if (!slices.ok()) return slices.status();
  return ConvertRouteConfiguration(
      *slices, [&now](const RouteConfigResource&) { return now; });
}

TEST(ConvertRouteConfigurationLazily, OnlyTheChosenHostsAreConverted) {
  std::string bytes;
  absl::StatusOr<RouteConfigResource> config =
      Lazily(ThreeHosts(), {1}, &bytes);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "routes");
  ASSERT_EQ(config->virtual_hosts.size(), 3u);
  // Every host's name and domains are read (lower-cased), so each can be
  // chosen; only "b" has its routes.
  EXPECT_THAT(config->virtual_hosts[1].domains,
              ElementsAre("b.test:80", "*.b.test"));
  EXPECT_TRUE(config->virtual_hosts[1].wire.empty());
  ASSERT_EQ(config->virtual_hosts[1].routes.size(), 1u);
  EXPECT_EQ(config->virtual_hosts[2].name, "bad");
  EXPECT_FALSE(config->virtual_hosts[0].wire.empty());
  EXPECT_TRUE(config->virtual_hosts[0].routes.empty());
  // A lazy host converts to what converting it eagerly gives.
  absl::StatusOr<VirtualHostResource> a =
      ConvertLazyVirtualHost(config->virtual_hosts[0]);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->name, "a");
  ASSERT_EQ(a->routes.size(), 1u);
  EXPECT_THAT(ClustersOf(a->routes[0]), ElementsAre("ca=1"));
  // The bad host: refused when converted, naming the field.
  absl::StatusOr<VirtualHostResource> bad =
      ConvertLazyVirtualHost(config->virtual_hosts[2]);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("routes[0].match.safe_regex.regex: invalid RE2 '('"));
}

TEST(ConvertRouteConfigurationLazily, ATargetReachingALazyHostConvertsIt) {
  std::string bytes;
  absl::StatusOr<RouteConfigResource> config = Lazily(ThreeHosts(), {}, &bytes);
  ASSERT_TRUE(config.ok()) << config.status();
  const ListenerResource listener;
  absl::StatusOr<ServiceConfig> b =
      BuildServiceConfig(listener, *config, "x.b.test");
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->routes.size(), 1u);
  ASSERT_EQ(b->routes[0].backends.size(), 1u);
  EXPECT_EQ(b->routes[0].backends[0].cluster, "cb");
  // A host found bad only now fails its target, naming host and field.
  absl::StatusOr<ServiceConfig> bad =
      BuildServiceConfig(listener, *config, "bad.test:80");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("virtual host 'bad' (converted when first reached): "
                        "routes[0].match.safe_regex.regex: invalid RE2"));
}

TEST(ConvertRouteConfigurationLazily, AChosenBadHostRefusesTheResource) {
  std::string bytes;
  absl::StatusOr<RouteConfigResource> config =
      Lazily(ThreeHosts(), {2}, &bytes);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[2].routes[0].match.safe_regex"));
}

TEST(ConvertRouteConfigurationLazily, ChoosingAllGivesTheEagerConversion) {
  RouteConfiguration wire = ThreeHosts();
  wire.mutable_virtual_hosts()->RemoveLast();
  std::string bytes;
  absl::StatusOr<RouteConfigResource> lazy = Lazily(wire, {0, 1, 1, 7}, &bytes);
  absl::StatusOr<RouteConfigResource> eager = ConvertRouteConfiguration(wire);
  ASSERT_TRUE(lazy.ok()) << lazy.status();
  ASSERT_TRUE(eager.ok()) << eager.status();
  ASSERT_EQ(lazy->virtual_hosts.size(), eager->virtual_hosts.size());
  for (size_t i = 0; i < eager->virtual_hosts.size(); ++i) {
    const VirtualHostResource& l = lazy->virtual_hosts[i];
    const VirtualHostResource& e = eager->virtual_hosts[i];
    EXPECT_TRUE(l.wire.empty());
    EXPECT_EQ(l.name, e.name);
    EXPECT_EQ(l.domains, e.domains);
    ASSERT_EQ(l.routes.size(), e.routes.size());
    for (size_t r = 0; r < e.routes.size(); ++r) {
      EXPECT_EQ(ClustersOf(l.routes[r]), ClustersOf(e.routes[r]));
      EXPECT_EQ(l.routes[r].max_stream_duration,
                e.routes[r].max_stream_duration);
    }
  }
}

TEST(ConvertRouteConfigurationLazily, WhatEveryHostIsCheckedForAtOnce) {
  // Domains, the number of routes and of hosts are read for every host.
  RouteConfiguration wire = ThreeHosts();
  wire.mutable_virtual_hosts(0)->add_domains("a*b");
  std::string bytes;
  EXPECT_THAT(Lazily(wire, {}, &bytes).status().message(),
              HasSubstr("virtual_hosts[0].domains[1]: 'a*b' is not a domain"));
  wire = ThreeHosts();
  for (int i = 0; i < 1000; ++i) {
    *wire.mutable_virtual_hosts(0)->add_routes() =
        wire.virtual_hosts(0).routes(0);
  }
  EXPECT_THAT(
      Lazily(wire, {}, &bytes).status().message(),
      HasSubstr("virtual_hosts[0].routes: 1001 routes, more than 1000"));
  wire = ThreeHosts();
  wire.mutable_virtual_hosts(1)->clear_routes();
  EXPECT_THAT(Lazily(wire, {}, &bytes).status().message(),
              HasSubstr("virtual_hosts[1].routes: empty"));
  RouteConfiguration many;
  for (int i = 0; i < 1001; ++i) {
    *many.add_virtual_hosts() = ThreeHosts().virtual_hosts(0);
  }
  EXPECT_THAT(Lazily(many, {}, &bytes).status().message(),
              HasSubstr("virtual_hosts: 1001 virtual hosts, more than 1000"));
}

TEST(ConvertRouteConfigurationLazily, UnknownFieldsAreSkippedAsProtobufDoes) {
  // Field 6 as fixed64, virtual_hosts (2) as a varint (a known number with
  // another wire type is an unknown field to protobuf), a group 9 holding
  // a varint, then the name: protobuf parses it, and so must the slicer.
  const std::string bytes(
      "\x31"
      "12345678"
      "\x10\x01"
      "\x4b\x08\x07\x4c"
      "\x0a\x01"
      "r",
      18);
  RouteConfiguration parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  absl::StatusOr<RouteConfigurationSlices> slices =
      SliceRouteConfiguration(bytes);
  ASSERT_TRUE(slices.ok()) << slices.status();
  EXPECT_EQ(slices->name, parsed.name());
  EXPECT_EQ(slices->name, "r");
  EXPECT_TRUE(slices->virtual_hosts.empty());
  // A group that never ends does not parse, for either.
  const std::string open_group("\x4b\x08\x07", 3);
  EXPECT_FALSE(parsed.ParseFromString(open_group));
  EXPECT_FALSE(SliceRouteConfiguration(open_group).ok());
}

TEST(ConvertRouteConfigurationLazily,
     BytesThatAreNotARouteConfigurationAreRefused) {
  for (const std::string& junk :
       {std::string("\xff\xff\xff"),
        std::string("\x0a\x05"
                    "ab"),
        std::string("\x12\x02\x0a\xff"), std::string("\x0a\x01\xff")}) {
    absl::StatusOr<RouteConfigurationSlices> slices =
        SliceRouteConfiguration(junk);
    if (!slices.ok()) {
      EXPECT_THAT(slices.status().message(),
                  HasSubstr("cannot parse a envoy.config.route.v3."
                            "RouteConfiguration"));
      continue;
    }
    // Sliced, but a virtual host does not parse.
    EXPECT_FALSE(ConvertRouteConfiguration(*slices, nullptr).ok());
  }
}

}  // namespace
}  // namespace mesh::internal::xds
