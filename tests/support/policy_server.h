// PolicyServer: a scripted Linkerd policy controller on 127.0.0.1 — a real
// gRPC server of io.linkerd.proxy.outbound.OutboundPolicies.Watch. Each
// watch gets its authority's policy (and every later one Set), or ends with
// the status Refuse gave; raw bytes can be pushed to test a hostile
// controller. It records what each watch asked for.
//
//   auto policies = PolicyServer::Start();
//   policies->Set("books:8080", policy);   // open watches get it now
//   options.policy_address = policies->address();
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_POLICY_SERVER_H_
#define MESH_TESTS_SUPPORT_POLICY_SERVER_H_

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "linkerd/outbound.pb.h"
#include "src/base/mutex.h"

namespace mesh::testing {

class PolicyServer {
 public:
  // Listens on 127.0.0.1 at an ephemeral port; aborts the test binary if it
  // cannot.
  static std::unique_ptr<PolicyServer> Start();
  ~PolicyServer();

  std::string address() const;

  // The policy watches of `authority` get, now and when they open.
  void Set(const std::string& authority,
           const io::linkerd::proxy::outbound::OutboundPolicy& policy);
  // Writes `bytes` as one message to the open watches of `authority`.
  void SendRaw(const std::string& authority, const std::string& bytes);
  // Open and future watches of `authority` end with `status` (until Set).
  void Refuse(const std::string& authority, grpc::Status status);

  // Watches opened for `authority` so far, and open now.
  int watches(const std::string& authority) const;
  int open(const std::string& authority) const;
  // The source_workload of every watch, in order.
  std::vector<std::string> source_workloads() const;

 private:
  class Reactor;
  class Service;
  PolicyServer() = default;
  // A watch asked for `authority`: registered (unless refused), and told
  // what it gets first.
  void Opened(Reactor* reactor, const std::string& authority,
              const std::string& source_workload,
              std::optional<grpc::Status>* refused,
              std::optional<std::string>* policy);
  void Closed(Reactor* reactor, const std::string& authority);
  // The open watches of `authority`, each held (Reactor::Hold).
  std::vector<Reactor*> HoldOpen(const std::string& authority)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  mutable internal::Mutex mu_;
  std::map<std::string, std::string> policies_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, grpc::Status> refused_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<Reactor*>> open_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> watches_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> source_workloads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_POLICY_SERVER_H_
