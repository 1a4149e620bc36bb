// What the tests of the tap server (Linkerd's Tap.Observe API over real
// gRPC on 127.0.0.1) share: a Mesh serving it in front of echo backends,
// calls sent from a thread meanwhile, and an Observe call run to its end.
//
//   struct Fixture : testing::TapMesh {
//     Fixture() : TapMesh(kTarget, 2) { channel = *mesh->NewChannel(kTarget); }
//     std::unique_ptr<Channel> channel;
//   } f;
//   testing::Traffic traffic(*f.channel);
//   testing::Observed got =
//       testing::Observe(f.tap_target(), testing::AllRequests(3));
//
// Thread-compatible unless noted.
#ifndef MESH_TESTS_SUPPORT_TAP_FIXTURES_H_
#define MESH_TESTS_SUPPORT_TAP_FIXTURES_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "linkerd/tap.grpc.pb.h"
#include "mesh/channel.h"
#include "mesh/discovery.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tools/common/echo_backend.h"

namespace mesh::testing {

// A Mesh serving Observe on 127.0.0.1 (a free port) over a StaticDiscovery
// that gives `target` one endpoint per echo backend, `backends` of them on
// 127.0.0.1. `options` are the Mesh's but for `discovery` and
// `tap_address`, which this sets. If Mesh::Create fails, the test fails
// with its status and `mesh` is null.
struct TapMesh {
  TapMesh(const std::string& target, int backends, MeshOptions options = {});
  // "127.0.0.1:PORT", the tap server's address.
  std::string tap_target() const;

  std::vector<std::unique_ptr<tools::EchoBackend>> backends;
  std::shared_ptr<StaticDiscovery> discovery;
  std::unique_ptr<Mesh> mesh;
};

// Sends calls from a thread, alternating /test.Echo/One and /test.Echo/Two
// with `metadata`, until Stop(), at most 200,000 of them over at most 60 s,
// so a subscription made at any moment of a test sees traffic. Stop() and
// sent() may be called from any thread.
class Traffic {
 public:
  explicit Traffic(Channel& channel, Metadata metadata = {});
  ~Traffic();
  Traffic(const Traffic&) = delete;
  Traffic& operator=(const Traffic&) = delete;

  void Stop();
  int sent() const { return sent_.load(); }

 private:
  internal::Notification stop_;
  std::atomic<int> sent_{0};
  std::thread thread_;
};

// An ObserveRequest for every request (`match.all` with no leaf), up to
// `limit`.
::io::linkerd::proxy::tap::ObserveRequest AllRequests(uint32_t limit);

// An Observe call run to its end.
struct Observed {
  grpc::Status status;
  std::vector<::io::linkerd::proxy::tap::TapEvent> events;
  std::map<std::string, std::string> trailers;
};

// Accepts one connection on 127.0.0.1 and relays it to 127.0.0.1:`to_port`
// from a socket bound to 127.0.0.2, so that the server sees a peer that is
// not local. The relay ends when either side closes, after 20 s, or when it
// is destroyed.
class RelayFrom127002 {
 public:
  explicit RelayFrom127002(int to_port);
  ~RelayFrom127002();
  RelayFrom127002(const RelayFrom127002&) = delete;
  RelayFrom127002& operator=(const RelayFrom127002&) = delete;

  // The port it accepts on, on 127.0.0.1.
  int port() const { return port_; }

 private:
  void Run(int to_port);

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Runs one Observe call over `channel` to its end (bounded by 20 s).
Observed Observe(const std::shared_ptr<grpc::Channel>& channel,
                 const ::io::linkerd::proxy::tap::ObserveRequest& request);

// The same over a plaintext channel to `target`.
Observed Observe(const std::string& target,
                 const ::io::linkerd::proxy::tap::ObserveRequest& request);

// One Observe call whose request is `bytes` as they are (they need not
// parse), to `target` over plaintext, run to its end (bounded by 20 s):
// for the server's answer to a request it cannot read.
grpc::Status ObserveBytes(const std::string& target, const std::string& bytes);

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_TAP_FIXTURES_H_
