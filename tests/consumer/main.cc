// Built against an installed mesh by tests/consumer/run.sh: proves the
// installed headers, library and CMake package are enough to use mesh.
#include <cstdio>

#include "mesh/mesh.h"

int main() {
  auto discovery = mesh::StaticDiscovery::Create();
  mesh::MeshOptions options;
  options.discovery = discovery;
  auto m = mesh::Mesh::Create(options);
  if (!m.ok()) return 1;
  auto channel = (*m)->NewChannel("nowhere.test:80");
  if (!channel.ok()) return 2;
  // No endpoints were given: the call must fail fast, naming the target.
  mesh::CallResult r = (*channel)->CallRaw("/pkg.Svc/Method", "");
  if (r.status.code() != absl::StatusCode::kUnavailable) return 3;
  std::printf("consumer ok: %s\n", r.status.ToString().c_str());
  return 0;
}
