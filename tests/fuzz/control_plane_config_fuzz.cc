// libFuzzer target for mesh-control-plane's config reader
// (tools/mesh-control-plane/config.h): any file must parse or be refused with
// a message naming the line — never crash, never exhaust the stack — and a
// config that parses must go on the wire as messages a client can parse
// back (proto3 strings are UTF-8; one that is not once froze the clients'
// streams), as outbound policies the client converts (or refuses) without
// harm, and as xDS resources whose weights gRPC's client accepts.
//
// Run through scripts/fuzz.sh. A violated invariant aborts with a message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "linkerd/destination.pb.h"
#include "linkerd/outbound.pb.h"
#include "src/base/utf8.h"
#include "src/discovery/linkerd/convert_policy.h"
#include "tests/fuzz/fuzz_require.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/linkerd_resources.h"
#include "tools/mesh-control-plane/policy_resources.h"
#include "tools/mesh-control-plane/xds_resources.h"

namespace {

namespace dst = ::io::linkerd::proxy::destination;
using mesh::controlplane::Config;

// The message survives the trip a client makes: serialize, parse back.
template <typename Message>
void CheckWire(const Message& message, const std::string& what) {
  std::string bytes;
  REQUIRE(message.SerializeToString(&bytes), what, " does not serialize");
  Message back;
  REQUIRE(back.ParseFromString(bytes), what,
          " does not parse back (a string that is not UTF-8?)");
}

// Every xDS resource unpacks as its type; weights and their totals fit in
// 32 bits (gRPC clients NACK a weighted-cluster total that differs from
// the weights' sum), none is zero.
void CheckXds(const Config& config) {
  using mesh::controlplane::XdsType;
  mesh::controlplane::XdsResourceSet set =
      mesh::controlplane::BuildXdsResources(config);
  REQUIRE(set[XdsType::kListener].size() == config.targets.size(),
          "not one listener per target");
  for (const auto& [name, any] : set[XdsType::kListener]) {
    envoy::config::listener::v3::Listener listener;
    REQUIRE(any.UnpackTo(&listener), "a listener does not unpack");
  }
  for (const auto& [name, any] : set[XdsType::kCluster]) {
    envoy::config::cluster::v3::Cluster cluster;
    REQUIRE(any.UnpackTo(&cluster), "a cluster does not unpack");
  }
  for (const auto& [name, any] : set[XdsType::kRoute]) {
    envoy::config::route::v3::RouteConfiguration routes;
    REQUIRE(any.UnpackTo(&routes), "a route configuration does not unpack");
    for (const auto& host : routes.virtual_hosts()) {
      REQUIRE(!host.routes().empty(), "a virtual host without routes");
      for (const auto& route : host.routes()) {
        if (!route.route().has_weighted_clusters()) continue;
        const auto& split = route.route().weighted_clusters();
        uint64_t sum = 0;
        for (const auto& c : split.clusters()) {
          REQUIRE(c.weight().value() > 0, "a zero cluster weight");
          sum += c.weight().value();
        }
        REQUIRE(sum == split.total_weight().value(),
                "total_weight is not the sum of the weights");
      }
    }
  }
  for (const auto& [name, any] : set[XdsType::kEndpoints]) {
    envoy::config::endpoint::v3::ClusterLoadAssignment cla;
    REQUIRE(any.UnpackTo(&cla), "a load assignment does not unpack");
    uint64_t sum = 0;
    for (const auto& locality : cla.endpoints()) {
      REQUIRE(locality.has_locality(), "a locality is missing");
      REQUIRE(locality.load_balancing_weight().value() > 0,
              "a locality without weight");
      sum += locality.load_balancing_weight().value();
    }
    REQUIRE(sum <= UINT32_MAX, "locality weights overflow 32 bits");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Config> config = mesh::controlplane::ParseConfig(text);
  if (!config.ok()) {
    REQUIRE(config.status().code() == absl::StatusCode::kInvalidArgument,
            "refusal is not INVALID_ARGUMENT");
    const std::string message(config.status().message());
    REQUIRE(absl::StartsWith(message, "line "), "no line in: ", message);
    // Printable whatever the input: no NUL or control byte, valid UTF-8.
    REQUIRE(mesh::internal::IsValidUtf8(message), "message not UTF-8");
    for (char c : message) {
      REQUIRE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f,
              "control byte in the message");
    }
    return 0;
  }
  for (const auto& [target, spec] : config->targets) {
    REQUIRE(mesh::internal::IsValidUtf8(target), "target not UTF-8");
    for (const mesh::controlplane::EndpointSpec& e : spec.endpoints) {
      CheckWire(mesh::controlplane::ToWire(e), "an endpoint");
    }
    CheckWire(mesh::controlplane::ProfileFor(*config, target), "a profile");
    // Every named target has a policy (its own or the default); the
    // client's conversion takes it or refuses it naming the field.
    absl::StatusOr<io::linkerd::proxy::outbound::OutboundPolicy> policy =
        mesh::controlplane::PolicyFor(*config, target);
    REQUIRE(policy.ok(),
            "no policy for a named target: ", policy.status().ToString());
    CheckWire(*policy, "a policy");
    absl::StatusOr<mesh::internal::linkerd::PolicyConversion> converted =
        mesh::internal::linkerd::ConvertPolicy(*policy, target);
    REQUIRE(converted.ok() ||
                converted.status().code() == absl::StatusCode::kInvalidArgument,
            "a policy refused with ", converted.status().ToString());
  }
  CheckXds(*config);
  return 0;
}
