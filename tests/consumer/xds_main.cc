// Built against an installed mesh and mesh_xds by tests/consumer/run.sh:
// proves the installed xDS source links and refuses a bad bootstrap naming
// the field, as documented.
#include <cstdio>
#include <string>

#include "mesh/xds.h"

int main() {
  mesh::XdsOptions options;
  options.bootstrap_json = R"({"xds_servers": [{"channel_creds": []}]})";
  auto source = mesh::NewXdsDiscovery(options);
  if (source.ok()) return 1;
  if (source.status().code() != absl::StatusCode::kInvalidArgument) return 2;
  if (std::string(source.status().message()).find("server_uri") ==
      std::string::npos) {
    return 3;
  }
  std::printf("xds consumer ok: %s\n", source.status().ToString().c_str());
  return 0;
}
