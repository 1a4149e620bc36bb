// What the xDS conversion tests share (tests/unit/xds_convert_*_test.cc):
// resources written in protobuf's text format, a Listener or a
// RouteConfiguration around a piece of one, the error a conversion
// refuses one with, and one-line pictures of what a route matches.
//
//   RouteResource r = OneRoute("match { prefix: \"/\" } route { cluster: \"a\"
//   }");
//
// A test file takes them, and the Envoy types and matchers they name, with
// `using namespace fixtures;`.
//
// Thread-compatible; EXPECT failures are the calling test's.
#ifndef MESH_TESTS_SUPPORT_XDS_CONVERT_FIXTURES_H_
#define MESH_TESTS_SUPPORT_XDS_CONVERT_FIXTURES_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/fault/v3/fault.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "google/protobuf/any.pb.h"
#include "google/protobuf/text_format.h"
#include "src/discovery/xds/xds_convert.h"

namespace mesh::internal::xds::fixtures {

using envoy::config::cluster::v3::Cluster;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::http::fault::v3::HTTPFault;
using envoy::extensions::filters::http::router::v3::Router;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpConnectionManager;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

template <typename T>
T Parse(absl::string_view text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text),
                                                            &message))
      << text;
  return message;
}

inline google::protobuf::Any Pack(const google::protobuf::Message& message) {
  google::protobuf::Any any;
  any.PackFrom(message);
  return any;
}

// Text format's Any syntax needs the types registered: referencing them
// links their generated code in.
inline const std::string kHcm =
    absl::StrCat("[type.googleapis.com/",
                 HttpConnectionManager::descriptor()->full_name(), "]");
inline const std::string kRouter = absl::StrCat(
    "[type.googleapis.com/", Router::descriptor()->full_name(), "] {}");
inline const std::string kFault = absl::StrCat(
    "[type.googleapis.com/", HTTPFault::descriptor()->full_name(), "]");
inline constexpr absl::string_view kFilterConfig =
    "[type.googleapis.com/envoy.config.route.v3.FilterConfig]";

// A Listener whose HttpConnectionManager is `hcm` (text format).
inline Listener ListenerWith(absl::string_view hcm) {
  Listener listener;
  listener.set_name("echo.local:7000");
  *listener.mutable_api_listener()->mutable_api_listener() =
      Pack(Parse<HttpConnectionManager>(hcm));
  return listener;
}

// An HttpConnectionManager over RDS with `filters` (text format) in front
// of the router.
inline std::string Hcm(absl::string_view filters) {
  return absl::StrCat(
      "rds { config_source { ads {} } route_config_name: \"routes\" }", filters,
      "http_filters { name: \"router\" typed_config { ", kRouter, " } }");
}

// A RouteConfiguration with one virtual host for "*" holding `routes`.
inline RouteConfiguration OneHost(absl::string_view routes) {
  return Parse<RouteConfiguration>(absl::StrCat(
      "name: \"routes\" virtual_hosts { name: \"all\" domains: \"*\" ", routes,
      " }"));
}

// The one route of OneHost(route); fails the test if it was refused or
// left out.
inline RouteResource OneRoute(absl::string_view route) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost(absl::StrCat("routes { ", route, " }")));
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok() || config->virtual_hosts.size() != 1 ||
      config->virtual_hosts[0].routes.size() != 1) {
    ADD_FAILURE() << "not one route";
    return RouteResource();
  }
  return config->virtual_hosts[0].routes[0];
}

// The error converting OneHost(routes { route }).
inline std::string RouteError(absl::string_view route) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost(absl::StrCat("routes { ", route, " }")));
  EXPECT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

inline std::string Describe(const RequestMatch& m);

inline std::string DescribeChildren(const RequestMatch& m) {
  std::vector<std::string> parts;
  for (const RequestMatch& child : m.children) parts.push_back(Describe(child));
  return absl::StrJoin(parts, ", ");
}

inline std::string Describe(const HeaderMatch& h) {
  const char* kinds[] = {"exact",  "prefix",   "regex", "present",
                         "suffix", "contains", "range"};
  std::string out = absl::StrCat(h.name, " ", kinds[static_cast<int>(h.kind)]);
  if (h.kind == HeaderMatch::Kind::kRange) {
    absl::StrAppend(&out, " [", h.range_start, ", ", h.range_end, ")");
  } else if (h.kind != HeaderMatch::Kind::kPresent) {
    absl::StrAppend(&out, " '", h.value, "'");
  }
  if (h.ignore_case) absl::StrAppend(&out, " ignore_case");
  return out;
}

// A one-line picture of a condition tree.
inline std::string Describe(const RequestMatch& m) {
  switch (m.kind) {
    case RequestMatch::Kind::kAll:
      return absl::StrCat("all(", DescribeChildren(m), ")");
    case RequestMatch::Kind::kAny:
      return absl::StrCat("any(", DescribeChildren(m), ")");
    case RequestMatch::Kind::kNot:
      return absl::StrCat("not(", DescribeChildren(m), ")");
    case RequestMatch::Kind::kPath:
      return absl::StrCat("regex(", m.path_regex, ")");
    case RequestMatch::Kind::kMethod:
      return absl::StrCat("method(", m.method, ")");
    case RequestMatch::Kind::kHeader:
      return absl::StrCat("header(", Describe(m.header), ")");
    case RequestMatch::Kind::kPathPrefix:
      return absl::StrCat("prefix(", m.path, m.case_sensitive ? "" : " ci",
                          ")");
    case RequestMatch::Kind::kPathExact:
      return absl::StrCat("path(", m.path, m.case_sensitive ? "" : " ci", ")");
    case RequestMatch::Kind::kFraction:
      return absl::StrCat("fraction(", m.per_million, ")");
    case RequestMatch::Kind::kQueryParam:
      return absl::StrCat("query(", Describe(m.header), ")");
  }
  return "?";
}

inline std::vector<std::string> ClustersOf(const RouteResource& r) {
  std::vector<std::string> out;
  for (const WeightedBackend& b : r.clusters) {
    EXPECT_TRUE(b.authority.empty());
    out.push_back(absl::StrCat(b.cluster, "=", b.weight));
  }
  return out;
}

// An EDS Cluster "outbound|7000||echo" with `more` (text format).
inline Cluster EdsCluster(absl::string_view more) {
  return Parse<Cluster>(
      absl::StrCat("name: \"outbound|7000||echo\" type: EDS "
                   "eds_cluster_config { eds_config { ads {} } } ",
                   more));
}

// The error converting `cluster` (which must be refused).
inline std::string ClusterError(const Cluster& cluster) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(cluster);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

// A DNS cluster of `type` whose load_assignment is `assignment` (text),
// with `more` fields.
inline Cluster DnsCluster(absl::string_view type, absl::string_view assignment,
                          absl::string_view more = "") {
  return Parse<Cluster>(absl::StrCat("name: \"dns\" type: ", type,
                                     " load_assignment { ", assignment, " } ",
                                     more));
}

// One lb_endpoint (text) at `address`:`port`, with `more` fields.
inline std::string Host(absl::string_view address, int port,
                        absl::string_view more = "") {
  return absl::StrCat(
      "lb_endpoints { endpoint { address { socket_address { address: \"",
      address, "\" port_value: ", port, " } } } ", more, " }");
}

// One locality (text) holding `lb_endpoints` (text).
inline std::string Locality(absl::string_view lb_endpoints,
                            absl::string_view more = "") {
  return absl::StrCat("endpoints { ", more, " ", lb_endpoints, " }");
}

}  // namespace mesh::internal::xds::fixtures

#endif  // MESH_TESTS_SUPPORT_XDS_CONVERT_FIXTURES_H_
