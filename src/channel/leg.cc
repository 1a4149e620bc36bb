#include "src/channel/leg.h"

#include <utility>

namespace mesh::internal {

Leg::Leg(std::shared_ptr<Destination> d, std::unique_ptr<Balancer> b,
         bool attach)
    : destination(std::move(d)), balancer(std::move(b)), attached(attach) {
  if (attached) destination->Attach(balancer.get());
}

Leg::~Leg() {
  if (listener_ != 0) destination->RemoveChangeListener(listener_);
  if (attached) destination->Detach(balancer.get());
}

void Leg::Listen(absl::AnyInvocable<void()> on_change) {
  listener_ = destination->AddChangeListener(std::move(on_change));
}

}  // namespace mesh::internal
