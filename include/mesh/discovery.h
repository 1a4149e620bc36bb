// Discovery sources turn a control plane's answers into endpoint updates.
//
// A source hands each subscriber the destination's updates (see
// mesh/endpoint.h) until the subscription is destroyed. StaticDiscovery is
// the source for endpoints given in code; it can change them at run time.
//
//   auto discovery = mesh::StaticDiscovery::Create();
//   discovery->SetEndpoints("books:7001", {{"127.0.0.1:7001"},
//   {"127.0.0.1:7002"}}); options.discovery = discovery;
//
// Thread-safe.
#ifndef MESH_DISCOVERY_H_
#define MESH_DISCOVERY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mesh/endpoint.h"

namespace mesh {

// Destroying it stops the updates; once the destructor returns the observer
// is not called again.
class DiscoverySubscription {
 public:
  virtual ~DiscoverySubscription() = default;
};

class DiscoverySource {
 public:
  virtual ~DiscoverySource() = default;
  // Starts delivering updates for `target` ("name:port") to `observer`, which
  // must outlive the returned subscription. Calls to the observer are
  // serialized; the first may come before Subscribe returns.
  virtual std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) = 0;
};

// Endpoints given in code. A target nobody has set has no endpoints yet (its
// calls fail UNAVAILABLE) until Update or SetEndpoints names it.
class StaticDiscovery final : public DiscoverySource {
 public:
  static std::shared_ptr<StaticDiscovery> Create();
  ~StaticDiscovery() override;

  // Applies `update` to `target` and forwards it to every subscriber.
  // INVALID_ARGUMENT (bad target, bad endpoint, an address twice) applies
  // nothing: subscribers keep the last good set.
  absl::Status Update(const std::string& target, const EndpointUpdate& update);
  // Update(target, EndpointUpdate::Reset(endpoints)).
  absl::Status SetEndpoints(const std::string& target,
                            std::vector<Endpoint> endpoints);

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override;

 private:
  struct State;
  StaticDiscovery();
  std::shared_ptr<State> state_;
};

}  // namespace mesh

#endif  // MESH_DISCOVERY_H_
