// The DNS side of LOGICAL_DNS and STRICT_DNS clusters (gRFC A37): the
// answer of each host, as DNS discovery delivers it, and the cluster's one
// endpoint set made of all of them.
//
//   auto answer = std::make_unique<DnsHostAnswer>([] { /* schedule */ });
//   auto sub = dns_source->Subscribe(host.Target(), answer.get());
//   ...  // later, on the client's side, under the client's lock:
//   DnsClusterUpdate u = CombineDnsAnswers({host}, {answer->Take()});
//
// Thread-safe.
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_DNS_CLUSTER_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_DNS_CLUSTER_H_

#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "mesh/endpoint.h"
#include "src/base/mutex.h"
#include "src/discovery/xds/xds_resources.h"

namespace mesh::internal::xds {

// The observer of one host's DNS subscription. The DNS source calls it on
// its own thread (after releasing its lock of the name), or inside
// Subscribe; the
// XdsClient destroys subscriptions under its lock, and a subscription's
// destructor waits for a call that is running. So this observer takes no
// lock of the client's: it keeps the answer under a mutex of its own and
// calls `wake`, which is to schedule the client's look at it elsewhere.
class DnsHostAnswer final : public EndpointObserver {
 public:
  struct State {
    bool answered = false;  // a first answer has come
    bool exists = true;     // false: the name does not exist (NXDOMAIN)
    std::vector<std::string> addresses;  // "ip:port", sorted, distinct
    // The last failed query since the previous Take(); empty if none. (A
    // failed query changes nothing else: the last answer stands.)
    std::string error;
    // A query failed before any answer: why. The host then counts as
    // answered with no address, so that it does not hold the cluster
    // waiting for good. Cleared by an answer.
    std::string failed_unanswered;
  };

  // `wake` is called after a change that Take() has not seen yet, once
  // until the next Take(); never under this object's lock.
  explicit DnsHostAnswer(absl::AnyInvocable<void()> wake)
      : wake_(std::move(wake)) {}

  void OnEndpointUpdate(const EndpointUpdate& update) override;
  void OnDiscoveryError(const absl::Status& status) override;

  // What the name has answered so far, and the error since the last Take
  // (then cleared). The next change wakes again.
  State Take();

 private:
  // Marks a change; true if `wake_` is to be called.
  bool ChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Called by the source's thread only (its calls are serialized).
  absl::AnyInvocable<void()> wake_;
  Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_);
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
};

// What a DNS cluster's hosts' answers make together.
struct DnsClusterUpdate {
  // kWaiting: no endpoint yet, and a host has not answered: nothing to
  // deliver. kEndpoints: the union of the answers so far. kNone: every
  // host has answered, none with an address.
  enum class Kind { kWaiting, kEndpoints, kNone };
  Kind kind = Kind::kWaiting;
  // kEndpoints: each address once, with the weight of the first host (in
  // the cluster's order) that resolves to it.
  std::vector<Endpoint> endpoints;
  // kNone: false if no name exists; `why` names each host and its answer.
  bool exists = true;
  std::string why;

  friend bool operator==(const DnsClusterUpdate& a, const DnsClusterUpdate& b) {
    return a.kind == b.kind && a.endpoints == b.endpoints &&
           a.exists == b.exists && a.why == b.why;
  }
};

// `answers[i]` is `hosts[i]`'s. A host that has not answered contributes
// nothing yet; nor does one whose name does not exist or has no address of
// the families `family` lets serve.
DnsClusterUpdate CombineDnsAnswers(
    const std::vector<DnsHost>& hosts,
    const std::vector<DnsHostAnswer::State>& answers,
    ClusterResource::DnsFamily family = ClusterResource::DnsFamily::kAll);

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_DNS_CLUSTER_H_
