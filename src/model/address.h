// Socket address and destination-name parsing shared by the model, the
// discovery sources and the transports. Pure functions: thread-safe.
#ifndef MESH_SRC_MODEL_ADDRESS_H_
#define MESH_SRC_MODEL_ADDRESS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mesh::internal {

struct SocketAddress {
  bool ipv6 = false;
  std::string ip;  // canonical text form, no brackets
  uint16_t port = 0;
};

// Parses "a.b.c.d:port" or "[v6]:port". INVALID_ARGUMENT names the problem.
absl::StatusOr<SocketAddress> ParseSocketAddress(absl::string_view address);

// gRPC target for one address: "ipv4:a.b.c.d:port" or "ipv6:[v6]:port".
std::string GrpcTargetFor(const SocketAddress& address);

// A destination is "name:port" (e.g. "books.default.svc.cluster.local:7001").
// OK, or INVALID_ARGUMENT naming the problem (empty, no port, bad port).
absl::Status ValidateDestination(absl::string_view destination);

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_ADDRESS_H_
