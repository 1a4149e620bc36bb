// CSDS, the xDS Client Status Discovery Service
// (envoy.service.status.v3.ClientStatusDiscoveryService): what each XdsClient
// of the process holds, resource by resource, for xDS debugging tools
// (grpcdebug, grpcurl). One service object serves the whole process; each
// Mesh with an xDS source serves it on its tap address
// (DiscoverySource::StatusService), under tap's access rule.
//
//   RegisterForCsds(client);  // NewXdsDiscovery does, for every client
//   ClientStatusResponse now = ClientStatus(/*exclude_contents=*/false);
//   builder.RegisterService(CsdsService().get());
//
// Thread-safe. The registry holds clients weakly: a client leaves CSDS when
// it is destroyed or shut down.
#ifndef MESH_SRC_DISCOVERY_XDS_CSDS_SERVICE_H_
#define MESH_SRC_DISCOVERY_XDS_CSDS_SERVICE_H_

#include <memory>

#include "envoy/service/status/v3/csds.pb.h"
#include "src/discovery/xds/xds_client.h"

namespace grpc {
class Service;
}  // namespace grpc

namespace mesh::internal::xds {

// Lists `client` in CSDS from now on, while it lives and is not shut down.
void RegisterForCsds(const std::shared_ptr<XdsClient>& client);

// What FetchClientStatus answers: one ClientConfig per listed client, in the
// order they were listed, each with its node and one GenericXdsConfig per
// resource it asked for or holds (type_url, name, version_info and
// last_updated of the accepted version, client_status, error_state while
// the last update stands NACKed, and the accepted resource as xds_config
// unless `exclude_contents`).
envoy::service::status::v3::ClientStatusResponse ClientStatus(
    bool exclude_contents);

// The process's CSDS service (FetchClientStatus and StreamClientStatus): the
// same object on every call, never destroyed. It checks no access itself:
// the server that registers it must (ObserveServer does).
std::shared_ptr<grpc::Service> CsdsService();

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_CSDS_SERVICE_H_
