// AdsStream: the server's side of one ADS stream (state of the world),
// without the I/O. It reads the client's requests — subscriptions by name,
// ACKs, NACKs — and says which responses the stream owes against a catalog:
// for LDS and CDS the whole set asked for whenever any of it changed or a
// name was added to it (one that does not exist too), for RDS and EDS only
// the resources asked for whose content the client has not been sent. Each
// type has its own version and nonce; a request answering an older nonce of
// its type is stale and ignored; a NACKed version is not sent again until
// its content changes.
//
//   AdsStream stream(7);
//   AdsRequestOutcome o = stream.OnRequest(request);   // log o.description
//   for (auto& r : stream.Responses(*catalog)) Write(r.message);
//
// Thread-compatible: one stream's requests and responses are handled on one
// thread.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_ADS_STREAM_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_ADS_STREAM_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "envoy/config/core/v3/core.pb.h"
#include "envoy/service/discovery/v3/discovery.pb.h"
#include "tools/mesh-control-plane/xds_catalog.h"

namespace mesh::controlplane {

struct AdsRequestOutcome {
  enum class Kind {
    kSubscribe,     // no nonce: a first request or a new subscription
    kAck,           // answers the latest response of its type, no error
    kNack,          // answers it with error_detail
    kStale,         // answers an older response: ignored
    kUnknownType,   // a type URL this server does not serve: ignored
    kTooManyNames,  // more than kMaxNamesPerRequest: the stream should end
  };
  Kind kind = Kind::kSubscribe;
  std::optional<XdsType> type;
  bool first_node = false;  // this request brought the stream's node
  // A NACK of a response already NACKed (the same nonce): not news.
  bool repeated = false;
  // One printable line: type, version, nonce, names, ACK/NACK and error.
  std::string description;
  std::string error;  // a NACK's error_detail message (printable)
};

// A response owed, with the names of the resources it carries.
struct AdsResponse {
  envoy::service::discovery::v3::DiscoveryResponse message;
  std::vector<std::string> names;
  // One printable line: type, version, nonce, names.
  std::string Describe() const;
};

class AdsStream {
 public:
  // Names one request may subscribe to: past it, a request is refused.
  static constexpr size_t kMaxNamesPerRequest = 10000;

  explicit AdsStream(int64_t id) : id_(id) {}

  int64_t id() const { return id_; }
  // The node of the stream's first request that had one (empty before).
  const envoy::config::core::v3::Node& node() const { return node_; }
  // The node's id, printable and bounded, for log lines.
  std::string NodeId() const;
  // "id=..., cluster=..., metadata={...}", printable, bounded.
  std::string DescribeNode() const;

  AdsRequestOutcome OnRequest(
      const envoy::service::discovery::v3::DiscoveryRequest& request);

  // The responses owed now, at most one per type, each with a new nonce
  // and the type's catalog version; marks their resources sent.
  std::vector<AdsResponse> Responses(const XdsCatalog& catalog);

 private:
  struct TypeState {
    bool subscribed = false;
    // LDS or CDS with "*", or with no names while none was ever named
    // (after that, no names means none: xDS's rule).
    bool wildcard = false;
    bool ever_named = false;
    std::string nacked_nonce;  // of the latest response NACKed
    std::set<std::string> names;
    std::string nonce;  // of the latest response sent
    bool answered = false;
    // What the client was last sent: name → version.
    std::map<std::string, int64_t> sent;
  };

  const int64_t id_;
  envoy::config::core::v3::Node node_;
  bool has_node_ = false;
  int64_t nonces_ = 0;
  std::array<TypeState, kXdsTypes> types_;
};

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_ADS_STREAM_H_
