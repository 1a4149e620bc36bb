// DeltaDestination: a small Linkerd Destination server (Get and GetProfile,
// real gRPC on 127.0.0.1) for one target whose endpoints change by deltas
// given in code. Push(remove, add) sends every open Get stream a Remove and
// then an Add message at once, the way Linkerd's destination controller
// streams endpoint changes; it never diffs the whole set. (The example
// control plane, tools/mesh-control-plane, diffs its whole config on every
// change: with 10,000 endpoints that is O(N) work per update in this
// process, on the cores the measured calls use.) A new Get stream gets the
// whole current set in one Add; GetProfile sends the profile once and stays
// open.
//
//   auto d = DeltaDestination::Start("churn.bench:80", endpoints, profile);
//   LinkerdDiscoveryOptions o;
//   o.address = absl::StrCat("127.0.0.1:", (*d)->port());
//   (*d)->Push({"10.0.0.1:8080"}, {new_endpoint});
//
// Thread-safe.
#ifndef MESH_BENCH_E2E_CHURN_DESTINATION_H_
#define MESH_BENCH_E2E_CHURN_DESTINATION_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "linkerd/destination.pb.h"
#include "tools/mesh-control-plane/config.h"

namespace mesh::bench {

class DeltaDestination {
 public:
  // Listens on 127.0.0.1, port picked by the system. Get for another target
  // than `target` is answered INVALID_ARGUMENT ("not a mesh service").
  static absl::StatusOr<std::unique_ptr<DeltaDestination>> Start(
      const std::string& target,
      const std::vector<controlplane::EndpointSpec>& endpoints,
      const controlplane::ProfileSpec& profile);
  ~DeltaDestination();

  int port() const { return port_; }

  // Removes the endpoints at `remove` and adds `add` (replacing any with the
  // same address); open streams get one Remove (if `remove` is not empty)
  // then one Add (if `add` is not empty). Does not wait for the writes.
  void Push(const std::vector<std::string>& remove,
            const std::vector<controlplane::EndpointSpec>& add);

  int open_streams() const;
  // Get messages written to streams so far.
  int64_t messages_written() const;

  // Stops serving: open streams end UNAVAILABLE. Idempotent.
  void Kill();

 private:
  class Service;
  struct Stream {
    std::deque<std::shared_ptr<const io::linkerd::proxy::destination::Update>>
        queue;
  };
  DeltaDestination() = default;

  std::string target_;
  io::linkerd::proxy::destination::DestinationProfile profile_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  mutable absl::Mutex mu_;
  std::map<std::string, io::linkerd::proxy::destination::WeightedAddr> current_
      ABSL_GUARDED_BY(mu_);
  std::set<Stream*> streams_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int open_streams_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t written_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_CHURN_DESTINATION_H_
