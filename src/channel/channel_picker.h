// What a call of a channel picks from, as one immutable snapshot: the
// target's routes (with their budget and traffic splits), one leg per
// backend the routes name, the direct endpoint's leg. The control path
// builds it on every service config and backend policy (PickerPublisher,
// on the Mesh's timer thread); a call reads it once.
//
//   std::shared_ptr<const ChannelPicker> picker = publisher.Current();
//   const CompiledRoute& route = picker->routes->table->Match(request);
//   const std::shared_ptr<Leg>* leg = picker->LegFor(split->key(i));
//
// ChannelPicker: immutable once published, so thread-safe.
// PickerPublisher: thread-safe.
#ifndef MESH_SRC_CHANNEL_CHANNEL_PICKER_H_
#define MESH_SRC_CHANNEL_CHANNEL_PICKER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mesh/balancer.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"
#include "src/channel/destination.h"
#include "src/channel/leg.h"
#include "src/channel/mesh_core.h"

namespace mesh::internal {

struct ChannelPicker {
  ChannelPicker() = default;
  ChannelPicker(const ChannelPicker&) = delete;
  ChannelPicker& operator=(const ChannelPicker&) = delete;
  // Its legs may be the last owners of their destinations (a newer picker
  // dropped them): they end on DestroyLater's thread, not on the thread
  // that lets go of the picker, which may be a gRPC callback thread or the
  // timer thread.
  ~ChannelPicker();

  // The target's routes it was built from.
  std::shared_ptr<const Destination::Routes> routes;
  // The target's own leg (the same in every picker of a channel; null in
  // the placeholder a publisher starts and closes with).
  std::shared_ptr<Leg> apex;
  // The leg of each backend of the routes' splits, by TrafficSplit::key (a
  // backend that names the target itself has the apex's). A backend whose
  // destination could not be made (the Mesh shut down) has none.
  absl::flat_hash_map<std::string, std::shared_ptr<Leg>> legs;
  // The leg of routes->direct (the config's direct endpoint); null without
  // one.
  std::shared_ptr<Leg> direct;
  // The apex's Destination::change_epoch() read before it was built: while
  // that is unchanged, so is everything it was built from.
  uint64_t apex_epoch = 0;
  // Destination::AwaitsRoutes() of the apex when it was built.
  bool awaits_routes = false;

  // The leg for a backend of a split of `routes`; null if it has none.
  const std::shared_ptr<Leg>* LegFor(const std::string& key) const {
    auto found = legs.find(key);
    return found == legs.end() || found->second == nullptr ? nullptr
                                                           : &found->second;
  }
  // Whether `leg`, of this picker, was made before its backend's latest
  // policy (a picker built now would make it anew or refit it). The apex's
  // leg never is: it is made once, with the channel.
  bool Outdated(const Leg& leg) const {
    return &leg != apex.get() && leg.Stale();
  }
};

// Every backend of the splits of `routes` (the default split's, then each
// route's), with its TrafficSplit::key; pointers into `routes`.
std::vector<std::pair<const WeightedBackend*, const std::string*>>
SplitBackendsOf(const Destination::Routes& routes);

// Builds and publishes a channel's pickers. Listens to the target's
// destination and to each backend's; builds on the timer thread when they
// change, and at once when a call finds the published picker older than
// the apex (Current) or a leg outdated (Rebuild).
class PickerPublisher {
 public:
  PickerPublisher(std::string target, const BalancerOptions& options,
                  std::shared_ptr<MeshCore> mesh, std::shared_ptr<Leg> apex);
  ~PickerPublisher();

  // Starts listening to the apex; `self` is what a change rebuilds
  // (released off the timer thread). Call once, after construction.
  void Listen(std::weak_ptr<PickerPublisher> self);

  const std::shared_ptr<Leg>& apex() const { return apex_; }

  // The picker for a call: the published one when it is current (one
  // snapshot read and one atomic load), else a new one.
  std::shared_ptr<const ChannelPicker> Current() {
    {
      auto read = cell_.Read();
      if ((*read)->apex_epoch == apex_->destination->change_epoch()) {
        return *read;
      }
    }
    return Rebuild();
  }
  // Builds and publishes a picker from the destinations' state now,
  // reusing the legs of the last one that still fit; returns it.
  std::shared_ptr<const ChannelPicker> Rebuild();

  // A leg for a backend no current picker has (of a split of older
  // routes), used for one attempt; null when its destination cannot be
  // made.
  std::shared_ptr<Leg> OneOffLeg(const WeightedBackend& backend);
  // A leg over the direct endpoint `to` alone (not attached to the apex's
  // set); null if no balancer can be made.
  std::shared_ptr<Leg> DirectLeg(const std::shared_ptr<const Endpoint>& to);

  // The balancer statistics of the apex and of every backend's leg.
  std::vector<EndpointStats> Stats();

  // Drops the pickers' legs now, on this thread, and builds no more: the
  // channel is going (change listeners may still hold the publisher).
  void Close();

 private:
  // A leg for `backend`, or null when its destination cannot be made.
  std::shared_ptr<Leg> MakeLeg(const WeightedBackend& backend)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells this publisher when `leg`'s destination changes.
  void ListenTo(Leg& leg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string target_;
  const BalancerOptions options_;
  const std::shared_ptr<MeshCore> mesh_;
  const std::shared_ptr<Leg> apex_;
  Mutex mu_;
  std::weak_ptr<PickerPublisher> self_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // The last picker built (the one in cell_).
  std::shared_ptr<const ChannelPicker> current_ ABSL_GUARDED_BY(mu_);
  SnapshotCell<std::shared_ptr<const ChannelPicker>> cell_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_CHANNEL_PICKER_H_
