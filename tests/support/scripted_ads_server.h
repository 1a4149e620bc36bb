// ScriptedAdsServer: a real ADS server
// (envoy.service.discovery.v3.AggregatedDiscoveryService/
// StreamAggregatedResources) on 127.0.0.1 that answers nothing by itself.
// The test plays the control plane by hand: it reads the client's requests
// in arrival order and sends whatever responses it likes — bad resources,
// partial sets, responses never asked for — and ends streams at will. For
// protocol tests of an xDS client, to send what mesh-control-plane never
// sends.
//
//   auto server = ScriptedAdsServer::Start();
//   auto lds = server->WaitForRequest(kListenerUrl);   // the first LDS ask
//   std::string nonce;
//   server->Send(MakeResponse(kListenerUrl, "1", {&listener}), &nonce);
//   auto ack = server->WaitForRequest(kListenerUrl, [&](const auto& r) {
//     return r.response_nonce() == nonce;
//   });
//
// Thread-safe. Ownership: the test owns the server; the server owns its
// streams, which end (UNAVAILABLE) when it is destroyed.
#ifndef MESH_TESTS_SUPPORT_SCRIPTED_ADS_SERVER_H_
#define MESH_TESTS_SUPPORT_SCRIPTED_ADS_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "envoy/service/discovery/v3/discovery.pb.h"
#include "google/protobuf/message.h"
#include "src/base/mutex.h"

namespace mesh::testing {

class ScriptedAdsServer {
 public:
  using DiscoveryRequest = envoy::service::discovery::v3::DiscoveryRequest;
  using DiscoveryResponse = envoy::service::discovery::v3::DiscoveryResponse;

  // Listens on 127.0.0.1:`port` (0: an ephemeral port); aborts the test
  // binary if it cannot (the machine is broken, not the code under test).
  static std::unique_ptr<ScriptedAdsServer> Start(int port = 0);
  // Ends every open stream with UNAVAILABLE and stops the server (bounded:
  // calls still open after 5 s are cancelled).
  ~ScriptedAdsServer();
  ScriptedAdsServer(const ScriptedAdsServer&) = delete;
  ScriptedAdsServer& operator=(const ScriptedAdsServer&) = delete;

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:PORT"

  // The next request received on any stream, in arrival order, waiting at
  // most `timeout`; nullopt on timeout. `stream` (if not null) gets the
  // number of the stream it came on: 1 for the first stream started, 2 for
  // the next, and so on.
  std::optional<DiscoveryRequest> NextRequest(
      absl::Duration timeout = absl::Seconds(10), int* stream = nullptr);
  // The next request whose type_url is `type_url` and for which `pred`
  // holds (null: any), discarding the requests received before it; nullopt
  // if none comes within `timeout`.
  std::optional<DiscoveryRequest> WaitForRequest(
      const std::string& type_url,
      std::function<bool(const DiscoveryRequest&)> pred = nullptr,
      absl::Duration timeout = absl::Seconds(10), int* stream = nullptr);

  // Queues `response` on the newest open stream (writes go out one at a
  // time, in order); false if no stream is open. A response without a nonce
  // gets a fresh one ("n1", "n2", …), returned through `nonce` if not null.
  bool Send(DiscoveryResponse response, std::string* nonce = nullptr);
  // Ends the newest open stream with `status` once its queued responses are
  // written; no-op if none is open.
  void EndStream(grpc::Status status);

  // Streams started since Start, and those not ended yet.
  int streams_started() const;
  int open_streams() const;

 private:
  class Service;
  class Stream;
  struct Received {
    DiscoveryRequest request;
    int stream;
  };
  ScriptedAdsServer() = default;

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  mutable internal::Mutex mu_;
  internal::CondVar received_cv_;  // signalled when `received_` grows
  std::deque<Received> received_ ABSL_GUARDED_BY(mu_);
  // Streams gRPC has not finished with yet, oldest first.
  std::vector<Stream*> streams_ ABSL_GUARDED_BY(mu_);
  int streams_started_ ABSL_GUARDED_BY(mu_) = 0;
  int next_nonce_ ABSL_GUARDED_BY(mu_) = 0;
};

// A response of `type_url` with `version` holding `resources`, each packed
// into an Any, and no nonce (Send assigns one).
envoy::service::discovery::v3::DiscoveryResponse MakeResponse(
    const std::string& type_url, const std::string& version,
    const std::vector<const google::protobuf::Message*>& resources);

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_SCRIPTED_ADS_SERVER_H_
