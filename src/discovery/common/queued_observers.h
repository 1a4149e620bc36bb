// QueuedEndpoints and QueuedConfigs: a discovery source's handle on one
// subscriber's observer, called under the source's lock. Each call is
// queued on the source's WorkSerializer and reaches the observer after the
// lock is released, in order, one at a time, through the subscription's
// DeliveryGate (closed when the subscription goes, so nothing reaches an
// observer after that). Updates are moved, not copied.
//
//   auto gate = std::make_shared<DeliveryGate>();
//   QueuedEndpoints endpoints(observer, &serializer_, gate);
//   endpoints.OnEndpointUpdate(EndpointUpdate::Reset(std::move(set)));
//
// Thread-compatible (used under the source's lock); the observer is the
// subscriber's and outlives the gate's closing.
#ifndef MESH_SRC_DISCOVERY_COMMON_QUEUED_OBSERVERS_H_
#define MESH_SRC_DISCOVERY_COMMON_QUEUED_OBSERVERS_H_

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"
#include "src/base/work_serializer.h"

namespace mesh::internal {

// What both handles share: where a call is queued and the gate it passes.
class QueuedObserver {
 public:
  QueuedObserver(WorkSerializer* serializer, std::shared_ptr<DeliveryGate> gate)
      : serializer_(serializer), gate_(std::move(gate)) {}

 protected:
  // Queues `deliver(observer)`.
  template <typename Observer, typename Deliver>
  void Queue(Observer* observer, Deliver deliver) {
    serializer_->Schedule(
        [observer, gate = gate_, deliver = std::move(deliver)]() mutable {
          gate->Run([&] { deliver(*observer); });
        });
  }

 private:
  WorkSerializer* const serializer_;
  const std::shared_ptr<DeliveryGate> gate_;
};

class QueuedEndpoints final : public QueuedObserver {
 public:
  QueuedEndpoints(EndpointObserver* observer, WorkSerializer* serializer,
                  std::shared_ptr<DeliveryGate> gate)
      : QueuedObserver(serializer, std::move(gate)), observer_(observer) {}

  void OnBackendPolicy(BackendPolicy policy) {
    Queue(observer_, [policy = std::move(policy)](EndpointObserver& o) {
      o.OnBackendPolicy(policy);
    });
  }
  void OnEndpointUpdate(EndpointUpdate update) {
    Queue(observer_, [update = std::move(update)](EndpointObserver& o) {
      o.OnEndpointUpdate(update);
    });
  }
  void OnDiscoveryError(absl::Status status) {
    Queue(observer_, [status = std::move(status)](EndpointObserver& o) {
      o.OnDiscoveryError(status);
    });
  }

 private:
  EndpointObserver* const observer_;
};

class QueuedConfigs final : public QueuedObserver {
 public:
  QueuedConfigs(ServiceConfigObserver* observer, WorkSerializer* serializer,
                std::shared_ptr<DeliveryGate> gate)
      : QueuedObserver(serializer, std::move(gate)), observer_(observer) {}

  void OnServiceConfig(ServiceConfig config) {
    Queue(observer_, [config = std::move(config)](ServiceConfigObserver& o) {
      o.OnServiceConfig(config);
    });
  }
  void OnServiceConfigError(absl::Status status) {
    Queue(observer_, [status = std::move(status)](ServiceConfigObserver& o) {
      o.OnServiceConfigError(status);
    });
  }
  void OnServiceConfigRemoved(absl::Status why) {
    Queue(observer_, [why = std::move(why)](ServiceConfigObserver& o) {
      o.OnServiceConfigRemoved(why);
    });
  }

 private:
  ServiceConfigObserver* const observer_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_COMMON_QUEUED_OBSERVERS_H_
