// Decoding the resources of a DiscoveryResponse: an Any of one of the four
// types, its name read, converted if the client asks for it.
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "google/protobuf/arena.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_service_config.h"

namespace mesh::internal::xds {
namespace {

template <typename Wire, typename Convert>
DecodedResource DecodeAs(const google::protobuf::Any& any, Convert convert,
                         NameWanted wanted) {
  DecodedResource d;
  // On an arena: a ClusterLoadAssignment of 10,000 endpoints is some 60,000
  // small messages and strings, freed here at once instead of one by one.
  google::protobuf::Arena arena;
  Wire& wire = *google::protobuf::Arena::CreateMessage<Wire>(&arena);
  if (!any.UnpackTo(&wire)) {
    d.resource = absl::InvalidArgumentError(
        absl::StrCat("cannot parse a ", Wire::descriptor()->full_name()));
    return d;
  }
  if constexpr (std::is_same_v<
                    Wire, envoy::config::endpoint::v3::ClusterLoadAssignment>) {
    d.name = wire.cluster_name();
  } else {
    d.name = wire.name();
  }
  if (!wanted(d.name)) {
    d.not_asked = true;
    return d;
  }
  d.bytes = any.value();
  absl::StatusOr<typename decltype(convert(wire))::value_type> converted =
      convert(wire);
  if (converted.ok()) {
    d.resource = AnyResource(*std::move(converted));
  } else {
    d.resource = converted.status();
  }
  return d;
}

// RDS: split, not parsed whole; only the virtual hosts a watched target
// reaches are converted now, the others when first reached (xds_convert.h).
// `value` (the resource's bytes, megabytes for a large table) is taken,
// not copied: the slices and DecodedResource::bytes share it.
DecodedResource DecodeRouteConfiguration(std::string* value, NameWanted wanted,
                                         AuthoritiesReaching reaching) {
  DecodedResource d;
  d.bytes = std::move(*value);
  absl::StatusOr<RouteConfigurationSlices> slices =
      SliceRouteConfiguration(d.bytes);
  if (!slices.ok()) {
    d.resource = slices.status();
    return d;
  }
  d.name = slices->name;
  if (!wanted(d.name)) {
    d.not_asked = true;
    return d;
  }
  const std::vector<std::string> authorities = reaching(d.name);
  // The slices view d.bytes; they are used up before it moves.
  absl::StatusOr<RouteConfigResource> converted = ConvertRouteConfiguration(
      *slices, [&authorities](const RouteConfigResource& heads) {
        std::vector<size_t> chosen;
        for (const std::string& authority : authorities) {
          const VirtualHostResource* v = SelectVirtualHost(heads, authority);
          if (v != nullptr) chosen.push_back(v - heads.virtual_hosts.data());
        }
        return chosen;
      });
  if (converted.ok()) {
    d.resource = AnyResource(*std::move(converted));
  } else {
    d.resource = converted.status();
  }
  return d;
}

}  // namespace

DecodedResource DecodeResource(ResourceType type, google::protobuf::Any& any,
                               NameWanted wanted,
                               const CertificateProviders& providers,
                               AuthoritiesReaching reaching) {
  switch (type) {
    case ResourceType::kListener:
      return DecodeAs<envoy::config::listener::v3::Listener>(
          any, [](const auto& w) { return ConvertListener(w); }, wanted);
    case ResourceType::kRouteConfig:
      return DecodeRouteConfiguration(any.mutable_value(), wanted, reaching);
    case ResourceType::kCluster:
      return DecodeAs<envoy::config::cluster::v3::Cluster>(
          any,
          [&providers](const auto& w) { return ConvertCluster(w, providers); },
          wanted);
    case ResourceType::kEndpoints:
      return DecodeAs<envoy::config::endpoint::v3::ClusterLoadAssignment>(
          any, [](const auto& w) { return ConvertClusterLoadAssignment(w); },
          wanted);
  }
  return DecodedResource{};
}

const char* TypeUrl(ResourceType type) {
  switch (type) {
    case ResourceType::kListener:
      return "type.googleapis.com/envoy.config.listener.v3.Listener";
    case ResourceType::kRouteConfig:
      return "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    case ResourceType::kCluster:
      return "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    case ResourceType::kEndpoints:
      return "type.googleapis.com/"
             "envoy.config.endpoint.v3.ClusterLoadAssignment";
  }
  return "";
}

const char* TypeName(ResourceType type) {
  switch (type) {
    case ResourceType::kListener:
      return "Listener";
    case ResourceType::kRouteConfig:
      return "RouteConfiguration";
    case ResourceType::kCluster:
      return "Cluster";
    case ResourceType::kEndpoints:
      return "ClusterLoadAssignment";
  }
  return "";
}

}  // namespace mesh::internal::xds
