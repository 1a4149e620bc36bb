// AdsService: xDS's Aggregated Discovery Service (state of the world) over
// gRPC, serving a Config as Listeners, RouteConfigurations, Clusters and
// ClusterLoadAssignments (xds_resources.h). Each Publish() pushes to every
// open stream only what changed (ads_stream.h). Logs to stderr: a stream's
// node when it opens, every NACK (node id and error), a type URL it does not
// serve; with `verbose`, one line per request and response. At most 1000
// streams at once, 10,000 names per request (more: RESOURCE_EXHAUSTED). The
// control plane registers it on the same server as Linkerd's Destination API.
//
//   AdsService ads(/*verbose=*/false);
//   builder.RegisterService(&ads);
//   ads.Publish(config);
//   ...
//   ads.Stop();  // before the server shuts down
//
// Thread-safe.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_ADS_SERVICE_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_ADS_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "envoy/service/discovery/v3/discovery.grpc.pb.h"
#include "src/base/mutex.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/xds_catalog.h"

namespace mesh::controlplane {

class AdsService final : public envoy::service::discovery::v3::
                             AggregatedDiscoveryService::Service {
 public:
  explicit AdsService(bool verbose) : verbose_(verbose) {}

  // Serves `config` from now on: builds its resources, versions them
  // against the last ones, wakes every stream.
  void Publish(const Config& config);
  // Refuses new streams and ends every stream that is not blocked writing
  // (UNAVAILABLE); the server's shutdown ends those. Idempotent.
  void Stop();

  // Streams open now; NACKs received, and the last one as logged (node id,
  // type, version and error); responses and resources sent, per type.
  int open_streams() const;
  int64_t nacks() const;
  std::string last_nack() const;
  int64_t responses_sent(XdsType type) const;
  int64_t resources_sent(XdsType type) const;
  // The catalog served now (nullptr before the first Publish).
  std::shared_ptr<const XdsCatalog> catalog() const;

  grpc::Status StreamAggregatedResources(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<envoy::service::discovery::v3::DiscoveryResponse,
                               envoy::service::discovery::v3::DiscoveryRequest>*
          stream) override;

 private:
  struct Counters {
    std::array<int64_t, kXdsTypes> responses{};
    std::array<int64_t, kXdsTypes> resources{};
  };

  const bool verbose_;
  internal::Mutex publish_mu_;
  mutable internal::Mutex mu_;
  std::shared_ptr<const XdsCatalog> catalog_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // one per Publish
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_stream_ ABSL_GUARDED_BY(mu_) = 0;
  int open_streams_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t nacks_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_nack_ ABSL_GUARDED_BY(mu_);
  Counters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_ADS_SERVICE_H_
