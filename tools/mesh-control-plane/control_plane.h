// ControlPlane: a real gRPC server for Linkerd's Destination API (Get and
// GetProfile) and OutboundPolicies API (Get and Watch), and xDS's ADS
// (ads_service.h), all answering from one Config, and streaming the
// differences — Add, Remove, NoEndpoints, a new profile or policy; the xDS
// resources that changed — to every open stream when the config
// changes (SetConfig, or the watched file). It is `mesh-control-plane`, and
// the tests embed it.
//
//   auto cp = ControlPlane::Start("127.0.0.1:0", config);
//   (*cp)->SetConfig(next);           // open streams get the difference
//   (*cp)->WatchFile("mesh.json");    // or follow a file
//
// Thread-safe.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_CONTROL_PLANE_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_CONTROL_PLANE_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "src/base/mutex.h"
#include "tools/mesh-control-plane/ads_service.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/config_file.h"

namespace mesh::controlplane {

class ControlPlane {
 public:
  // Listens on `listen` ("127.0.0.1:0" picks a free port), with
  // `credentials` (null: plaintext; tools/common/server_tls.h makes TLS
  // ones). `verbose_xds`: one log line per xDS request and response.
  static absl::StatusOr<std::unique_ptr<ControlPlane>> Start(
      const std::string& listen, Config config, bool verbose_xds = false,
      std::shared_ptr<grpc::ServerCredentials> credentials = nullptr);
  ~ControlPlane();

  int port() const { return port_; }

  // Replaces the config; every open stream sends what changed for its target.
  void SetConfig(Config config);

  // Reads `path` now (an error if it does not parse or holds more than
  // `max_bytes`), then looks at it every `interval` and applies each new
  // version that parses. A version is read only when the file changed (its
  // inode, size, modification or change time): an unchanged file costs one
  // stat() a look, whatever its size. A version that does not parse, or is
  // over `max_bytes`, is reported once on stderr ("path:line N: ...") and
  // the last good config keeps serving.
  absl::Status WatchFile(const std::string& path,
                         absl::Duration interval = absl::Milliseconds(200),
                         int64_t max_bytes = kDefaultMaxConfigBytes);

  // Calls received per method ("Get", "GetProfile", "OutboundPolicies.Get",
  // "OutboundPolicies.Watch") and target, and streams open now.
  int64_t calls(const std::string& method, const std::string& target) const;
  int open_streams() const;
  // File versions rejected by WatchFile, and the last rejection's message
  // (printable: control bytes and bad UTF-8 as \xNN).
  int64_t rejected_files() const;
  std::string last_file_error() const;
  // Times WatchFile read the file, and times it looked at it.
  int64_t file_reads() const;
  int64_t file_polls() const;

  // The xDS half: its streams, NACKs and pushes (ads_service.h).
  const AdsService& ads() const { return *ads_; }

  // Stops serving at once: open streams end with an error. Idempotent.
  void Kill();

 private:
  class Service;
  class PolicyService;
  ControlPlane() = default;
  // One look at the watched file: read and apply it if it changed.
  void PollFile(const std::string& path, int64_t max_bytes, FileStamp* last,
                size_t* last_hash);
  void RejectFile(const std::string& error);

  std::unique_ptr<Service> service_;
  std::unique_ptr<PolicyService> policy_service_;
  std::unique_ptr<AdsService> ads_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  internal::Mutex set_config_mu_;  // held across SetConfig
  mutable internal::Mutex mu_;
  Config config_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int open_streams_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t rejected_files_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t file_reads_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t file_polls_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_file_error_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, int64_t> calls_
      ABSL_GUARDED_BY(mu_);
  std::thread watcher_;
};

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_CONTROL_PLANE_H_
