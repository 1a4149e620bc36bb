#include "src/discovery/xds/csds_service.h"

#include <grpcpp/grpcpp.h>
#include <time.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "envoy/admin/v3/config_dump_shared.pb.h"
#include "envoy/config/core/v3/core.pb.h"
#include "envoy/service/status/v3/csds.grpc.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "src/base/destroy_later.h"
#include "src/base/mutex.h"

namespace mesh::internal::xds {
namespace {

namespace status = ::envoy::service::status::v3;
namespace admin = ::envoy::admin::v3;

// The clients listed in CSDS, held weakly, in the order they were listed.
struct Registry {
  Mutex mu;
  std::vector<std::weak_ptr<XdsClient>> clients ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed
  return *registry;
}

// The listed clients that are still alive, strongly held for one answer.
std::vector<std::shared_ptr<XdsClient>> LiveClients() {
  Registry& r = GetRegistry();
  std::vector<std::shared_ptr<XdsClient>> out;
  MutexLock lock(&r.mu);
  auto gone = [&out](const std::weak_ptr<XdsClient>& weak) {
    std::shared_ptr<XdsClient> client = weak.lock();
    if (client == nullptr) return true;
    out.push_back(std::move(client));
    return false;
  };
  r.clients.erase(std::remove_if(r.clients.begin(), r.clients.end(), gone),
                  r.clients.end());
  return out;
}

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const timespec ts = absl::ToTimespec(t);
  out->set_seconds(ts.tv_sec);
  out->set_nanos(static_cast<int32_t>(ts.tv_nsec));
}

admin::ClientResourceStatus CsdsStatus(ResourceStatus::State state) {
  switch (state) {
    case ResourceStatus::State::kRequested:
      return admin::REQUESTED;
    case ResourceStatus::State::kDoesNotExist:
      return admin::DOES_NOT_EXIST;
    case ResourceStatus::State::kAcked:
      return admin::ACKED;
    case ResourceStatus::State::kNacked:
      return admin::NACKED;
  }
  return admin::UNKNOWN;
}

void FillResource(const ResourceSnapshot& r,
                  status::ClientConfig::GenericXdsConfig* out) {
  out->set_type_url(TypeUrl(r.type));
  out->set_name(r.name);
  out->set_client_status(CsdsStatus(r.status.state));
  // A NACKed resource that had a good version keeps it: its version, time
  // and contents are the accepted ones.
  if (r.status.has_resource) {
    out->set_version_info(r.status.version);
    SetTimestamp(r.status.updated, out->mutable_last_updated());
    if (r.contents != nullptr) {
      out->mutable_xds_config()->set_type_url(TypeUrl(r.type));
      out->mutable_xds_config()->set_value(*r.contents);
    }
  }
  if (r.status.state == ResourceStatus::State::kNacked) {
    admin::UpdateFailureState* failure = out->mutable_error_state();
    failure->set_details(r.status.error);
    failure->set_version_info(r.status.nacked_version);
    SetTimestamp(r.status.nacked_at, failure->mutable_last_update_attempt());
  }
}

// StreamClientStatus: each request read is answered with the status of
// that moment, one at a time, until the client ends its side.
class StatusStream final
    : public grpc::ServerBidiReactor<status::ClientStatusRequest,
                                     status::ClientStatusResponse> {
 public:
  StatusStream() { StartRead(&request_); }

  void OnReadDone(bool ok) override {
    if (!ok) return End(grpc::Status::OK);  // the client is done (or gone)
    response_ = ClientStatus(request_.exclude_resource_contents());
    StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return End(grpc::Status::CANCELLED);
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  // One operation is in flight at a time, so no lock guards these.
  void End(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  status::ClientStatusRequest request_;
  status::ClientStatusResponse response_;
  bool finished_ = false;
};

class Csds final
    : public status::ClientStatusDiscoveryService::CallbackService {
 public:
  grpc::ServerUnaryReactor* FetchClientStatus(
      grpc::CallbackServerContext* context,
      const status::ClientStatusRequest* request,
      status::ClientStatusResponse* response) override {
    *response = ClientStatus(request->exclude_resource_contents());
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerBidiReactor<status::ClientStatusRequest,
                          status::ClientStatusResponse>*
  StreamClientStatus(grpc::CallbackServerContext* /*context*/) override {
    return new StatusStream();
  }
};

}  // namespace

void RegisterForCsds(const std::shared_ptr<XdsClient>& client) {
  Registry& r = GetRegistry();
  MutexLock lock(&r.mu);
  r.clients.erase(std::remove_if(r.clients.begin(), r.clients.end(),
                                 [](const std::weak_ptr<XdsClient>& c) {
                                   return c.expired();
                                 }),
                  r.clients.end());
  r.clients.push_back(client);
}

status::ClientStatusResponse ClientStatus(bool exclude_contents) {
  std::vector<std::shared_ptr<XdsClient>> clients = LiveClients();
  status::ClientStatusResponse response;
  for (const std::shared_ptr<XdsClient>& client : clients) {
    if (client->shut_down()) continue;
    status::ClientConfig* config = response.add_config();
    FillNode(client->node(), config->mutable_node());
    for (const ResourceSnapshot& r : client->Snapshot(!exclude_contents)) {
      FillResource(r, config->add_generic_xds_configs());
    }
  }
  // This may run on a gRPC callback thread and hold the last reference to a
  // client, whose destructor waits for its stream: not destroyed here.
  DestroyLater([clients = std::move(clients)] {});
  return response;
}

std::shared_ptr<grpc::Service> CsdsService() {
  static const auto* service =
      new std::shared_ptr<grpc::Service>(std::make_shared<Csds>());
  return *service;
}

}  // namespace mesh::internal::xds
