// GrpcCaller: unary calls through a raw grpc::Channel, the way
// src/transport calls (generic stub, callback API, 64-byte request), for the
// benchmarks' gRPC baselines: one address with pick_first, or an
// "ipv4:a,b,..." list with gRPC's own round_robin.
//
//   GrpcCaller rr("ipv4:127.0.0.1:7001,127.0.0.1:7002", "round_robin",
//                 absl::Seconds(5));
//   rr.Start([](bool ok) { ... });  // once, on a gRPC thread; must not block
//
// Thread-safe.
#ifndef MESH_BENCH_E2E_GRPC_CALLER_H_
#define MESH_BENCH_E2E_GRPC_CALLER_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"

namespace mesh::bench {

// The method every benchmark backend (tools/common/echo_backend) echoes.
inline constexpr char kBenchMethod[] = "/mesh.bench.Echo/Call";

class GrpcCaller {
 public:
  // `target`: a gRPC target; `policy`: its LB policy. The channel keeps its
  // own connections (local subchannel pool).
  GrpcCaller(const std::string& target, const std::string& policy,
             absl::Duration timeout);

  // Starts one call with the timeout as its deadline; `done(ok)`.
  void Start(std::function<void(bool)> done);

 private:
  const absl::Duration timeout_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_GRPC_CALLER_H_
