// The xDS bootstrap: which server to stream from and who this client is, read
// from the JSON file gRPC reads (GRPC_XDS_BOOTSTRAP /
// GRPC_XDS_BOOTSTRAP_CONFIG) so that one deployment configures mesh and
// proxyless gRPC alike.
//
//   absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(json_text);
//
// Plain values and pure functions: thread-compatible.
#ifndef MESH_SRC_DISCOVERY_XDS_BOOTSTRAP_H_
#define MESH_SRC_DISCOVERY_XDS_BOOTSTRAP_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"

namespace mesh::internal::xds {

// channel_creds of type "tls" (gRPC's, gRFC A65): PEM files, watched.
// Certificate files as gRPC's bootstrap names them: a channel_creds entry
// of type "tls" (gRFC A65) and a "file_watcher" certificate provider (gRFC
// A29) both take these four.
struct CertificateFiles {
  std::string certificate_file;
  std::string private_key_file;
  std::string ca_certificate_file;
  absl::Duration refresh_interval = absl::Minutes(10);  // gRPC's default
};

// channel_creds "tls": ca_certificate_file required (mesh uses no system
// roots); certificate_file and private_key_file both or neither (mutual
// TLS).
using XdsServerTls = CertificateFiles;

struct XdsServer {
  // A gRPC target: "host:port", "dns:///host:port", "unix:///path",
  // "unix:path", "ipv4:…".
  std::string server_uri;
  // The first channel_creds entry mesh supports ("insecure" or "tls"), and
  // its config as JSON text ("{}" when absent).
  std::string channel_creds_type;
  std::string channel_creds_config_json;
  // channel_creds_type "tls": its config.
  XdsServerTls tls;
  // server_features
  bool xds_v3 = false;
  bool ignore_resource_deletion = false;
};

struct XdsNode {
  std::string id;
  std::string cluster;
  std::string region;
  std::string zone;
  std::string sub_zone;
  google::protobuf::Struct metadata;
};

// A certificate_providers entry, kept for TLS (its config as JSON text).
// A certificate_providers entry of plugin "file_watcher": the files
// Istio's agent writes. certificate_file and private_key_file come
// together; at least they or ca_certificate_file.
using FileWatcherConfig = CertificateFiles;

struct CertificateProvider {
  std::string plugin_name;
  std::string config_json;
  // plugin_name "file_watcher": its config, checked. Unset for other
  // plugins (a cluster that names one is refused).
  std::optional<FileWatcherConfig> file_watcher;
};

// By instance name.
using CertificateProviders = std::map<std::string, CertificateProvider>;

struct XdsBootstrap {
  std::vector<XdsServer> servers;  // at least one; mesh uses the first
  XdsNode node;
  CertificateProviders certificate_providers;
};

// Parses bootstrap JSON. INVALID_ARGUMENT naming the field (as a path,
// e.g. "xds_servers[0].channel_creds: no supported type (got: google_default)
// ...") for
// anything missing, of the wrong type or unsupported; also for text that is
// not JSON, not a JSON object, or over 1 MiB. Unknown keys are ignored, as
// gRPC ignores them.
absl::StatusOr<XdsBootstrap> ParseXdsBootstrap(absl::string_view json);

// The bootstrap from, in order: `json` if not empty; the file at `path` if
// not empty; the file named by GRPC_XDS_BOOTSTRAP; the JSON in
// GRPC_XDS_BOOTSTRAP_CONFIG (gRPC's order; an empty variable counts as
// unset). INVALID_ARGUMENT naming the source (and the field) when it cannot
// be read or parsed ("bootstrap file /x/y: xds_servers[0].server_uri:
// missing"), or when none is given.
absl::StatusOr<XdsBootstrap> LoadXdsBootstrap(const std::string& json,
                                              const std::string& path);

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_BOOTSTRAP_H_
