// The discovery source interface (a service-provider interface: it may
// change while mesh is 0.x): what turns a control plane's answers into
// endpoint updates and service configs for the Mesh. The built-in sources
// (StaticDiscovery, NewLinkerdDiscovery in mesh/discovery.h,
// NewXdsDiscovery, NewDnsDiscovery) implement it; so may an application.
//
//   class MySource : public mesh::DiscoverySource {
//     std::unique_ptr<mesh::DiscoverySubscription> Subscribe(
//         const std::string& target, mesh::EndpointObserver* o) override;
//   };
//
// Implementations must be thread-safe.
#ifndef MESH_SPI_DISCOVERY_SOURCE_H_
#define MESH_SPI_DISCOVERY_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "mesh/endpoint.h"
#include "mesh/export.h"
#include "mesh/service_config.h"

namespace mesh {

// Destroying it stops the updates; once the destructor returns the observer
// is not called again.
class MESH_EXPORT DiscoverySubscription {
 public:
  // What a source believes about one of the resources behind this
  // subscription (xDS: its Listener and RouteConfiguration, or its Cluster
  // and ClusterLoadAssignment), as xDS's client status (CSDS) shows it.
  struct Resource {
    std::string type;  // e.g. "Listener"
    std::string name;
    std::string state;    // REQUESTED, ACKED, NACKED or DOES_NOT_EXIST
    std::string version;  // of the accepted resource; empty if none
    absl::Time updated = absl::InfinitePast();  // when it was accepted
    std::string error;  // why it was last rejected (NACKED)
  };
  // What a streaming source has seen, for Mesh::Describe().
  struct State {
    bool connected = false;  // a stream is open and has delivered
    int64_t streams_started = 0;
    int64_t messages = 0;
    std::string last_error;  // empty if none
    std::vector<Resource> resources;
  };

  virtual ~DiscoverySubscription() = default;
  // Sources without streams report the default State.
  virtual State GetState() const { return {}; }
  // The Mesh could not connect to one of the target's endpoints. A source
  // that can look again early (DNS: a record may have moved) does so within
  // its own rate limit; others ignore it. Called on any thread, possibly
  // often; must not block or call back into the Mesh.
  virtual void RefreshSoon() {}
};

// What a source of the application's own implements. The built-in sources
// do more through an interface internal to mesh: clusters (xDS backends),
// a status service (CSDS), authorities in targets (DNS), the Mesh's timer
// thread lent to them.
class MESH_EXPORT DiscoverySource {
 public:
  virtual ~DiscoverySource() = default;
  // Starts delivering updates for `target` ("name:port") to `observer`, which
  // must outlive the returned subscription. Calls to the observer are
  // serialized; the first may come before Subscribe returns. Subscribe must
  // not call back into the Mesh (it runs under the Mesh's lock).
  virtual std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) = 0;
  // Starts delivering service configs (routes, budget, split) for `target`.
  // A source without configs returns null: the destination then has the
  // default config (one catch-all route, no retries, no timeout).
  virtual std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) {
    (void)target;
    (void)observer;
    return nullptr;
  }
  // The target scheme this source serves ("xds" for xds:///name:port); empty
  // for none. MeshOptions::discovery also serves targets of its scheme.
  virtual std::string Scheme() const { return ""; }
};

}  // namespace mesh

#endif  // MESH_SPI_DISCOVERY_SOURCE_H_
