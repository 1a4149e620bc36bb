// The config as xDS resources: for each target "name:port", a Listener
// "name:port" (its api_listener an HttpConnectionManager with RDS over ADS
// and the router filter), a RouteConfiguration and an EDS Cluster both named
// "outbound|port||name" (istiod's scheme; mutual TLS when endpoints have
// identities), and that cluster's ClusterLoadAssignment. docs/xds.md has
// the full mapping.
//
//   XdsResourceSet set = BuildXdsResources(config);
//   const google::protobuf::Any& cla =
//       set[XdsType::kEndpoints].at("outbound|7001||books.local");
//
// Pure functions; thread-compatible.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_XDS_RESOURCES_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_XDS_RESOURCES_H_

#include <array>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "google/protobuf/any.pb.h"
#include "tools/mesh-control-plane/config.h"

namespace mesh::controlplane {

// The four resource types of the chain, in the order a client walks it.
enum class XdsType { kListener = 0, kRoute, kCluster, kEndpoints };
inline constexpr int kXdsTypes = 4;
inline constexpr std::array<XdsType, kXdsTypes> kAllXdsTypes = {
    XdsType::kListener, XdsType::kRoute, XdsType::kCluster,
    XdsType::kEndpoints};

// "type.googleapis.com/envoy.config.listener.v3.Listener", ...
const std::string& TypeUrl(XdsType type);
// The type of a type URL; nullopt for any other.
std::optional<XdsType> TypeOfUrl(absl::string_view type_url);
// "LDS", "RDS", "CDS", "EDS": for log lines.
const char* ShortName(XdsType type);
// LDS and CDS responses carry every resource asked for (one left out is
// deleted); RDS and EDS responses carry any subset.
bool IsFullSet(XdsType type);

// Resource names of a target "name:port".
std::string ListenerName(const std::string& target);  // "name:port"
std::string ClusterName(const std::string& target);   // "outbound|port||name"

// Every resource of one type, by name, packed as it goes on the wire.
using XdsResources = std::map<std::string, google::protobuf::Any>;
class XdsResourceSet {
 public:
  XdsResources& operator[](XdsType t) { return by_type_[static_cast<int>(t)]; }
  const XdsResources& operator[](XdsType t) const {
    return by_type_[static_cast<int>(t)];
  }

 private:
  std::array<XdsResources, kXdsTypes> by_type_;
};

// The resources of every target of `config` (not_mesh and silent entries
// are Linkerd-only and have none). A target any of whose endpoints has a
// tls_identity gets a Cluster with an UpstreamTlsContext as istiod sends
// proxyless gRPC: certificate and roots from the bootstrap's provider
// instance config.xds_certificate_provider ("default" and "ROOTCA"), one
// exact SAN matcher per distinct identity, sorted.
XdsResourceSet BuildXdsResources(const Config& config);

// One target's ClusterLoadAssignment: a locality per zone (weighted by the
// sum of its endpoints' weights), an endpoint per address with its weight,
// UNHEALTHY when the config says healthy: false.
envoy::config::endpoint::v3::ClusterLoadAssignment LoadAssignmentFor(
    const std::string& target, const TargetSpec& spec);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_XDS_RESOURCES_H_
