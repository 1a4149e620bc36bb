// ResourceCache: what an XdsClient has asked for and accepted, per type —
// the names asked for, the last accepted version, the last response's
// nonce — and per name its status (as CSDS shows it), the last good
// resource and its bytes. Applying a response's resources here is the
// protocol's half that reads them; the requests, ACKs and NACKs are the
// client's.
//
//   std::vector<std::string> errors = cache.Apply(type, response, reaching,
//                                                 options);
//   if (errors.empty()) Ack(type); else Nack(type, errors);
//
// Thread-compatible: the client keeps it under its lock.
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_RESOURCE_CACHE_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_RESOURCE_CACHE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "src/base/log_limiter.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_resources.h"

namespace envoy::service::discovery::v3 {
class DiscoveryResponse;
}  // namespace envoy::service::discovery::v3

namespace mesh::internal::xds {

// What the client believes about one resource, as CSDS shows it.
struct ResourceStatus {
  enum class State { kRequested, kDoesNotExist, kAcked, kNacked };
  State state = State::kRequested;
  // Of the accepted resource; at most 256 bytes of it (QuotedText).
  std::string version;
  absl::Time updated;          // when it was accepted
  std::string error;           // the last NACK's reason (kNacked)
  std::string nacked_version;  // of the response it NACKed (kNacked), as above
  absl::Time nacked_at;        // when that response came (kNacked)
  bool has_resource = false;   // a good version is kept
};
const char* StateName(ResourceStatus::State state);

// One resource of ResourceCache::Snapshot.
struct ResourceSnapshot {
  ResourceType type;
  std::string name;
  ResourceStatus status;
  // The accepted resource as it came (serialized `type`), shared with the
  // cache; null if none is kept or contents were not asked for.
  std::shared_ptr<const std::string> contents;
};

// One name asked for.
struct CachedResource {
  ResourceStatus status;
  std::shared_ptr<const AnyResource> resource;  // the last good one
  // Its serialized form: tells an unchanged resource apart, and is what
  // CSDS shows (Snapshot shares it).
  std::shared_ptr<const std::string> bytes;
  // The does-not-exist clock's number (0: none). A clock is never
  // cancelled under the client's lock (TimerThread::Cancel waits for a
  // running task, which may be waiting for that lock): it is forgotten,
  // and a task whose number is no longer its entry's does nothing.
  uint64_t timer = 0;
};

class ResourceCache {
 public:
  struct TypeState {
    std::string version;  // last accepted
    std::string nonce;    // of the last response
    std::set<std::string> names;
    std::map<std::string, CachedResource> entries;  // one per name
  };
  // What Apply needs besides the response.
  struct ApplyOptions {
    const CertificateProviders* providers = nullptr;
    // The server's: a Listener or Cluster left out of a response is kept.
    bool ignore_resource_deletion = false;
    // Where lines a server can repeat at will are limited.
    LogLimiter* log = nullptr;
  };

  TypeState& of(ResourceType type) { return types_[static_cast<int>(type)]; }
  const TypeState& of(ResourceType type) const {
    return types_[static_cast<int>(type)];
  }
  // Null if `name` is not asked for.
  CachedResource* Find(ResourceType type, const std::string& name);
  const CachedResource* Find(ResourceType type, const std::string& name) const;
  // The accepted resource of `name`, as T; null if none.
  template <typename T>
  const T* Get(ResourceType type, const std::string& name) const {
    const CachedResource* e = Find(type, name);
    return e == nullptr || e->resource == nullptr ? nullptr
                                                  : &std::get<T>(*e->resource);
  }

  // Makes `names` those of `type` asked for: the entries of names no longer
  // asked leave, new ones come as requested. False if nothing changed.
  bool SetNames(ResourceType type, std::set<std::string> names);

  // The resources of `response` (of `type`): each one asked for is decoded
  // and kept (its status ACKED with the response's version) or refused
  // (NACKED, the last good one kept); names not asked for are ignored; for
  // Listeners and Clusters, one had and left out is deleted unless
  // ignore_resource_deletion. Returns one error per bad resource, naming
  // it and its problem.
  std::vector<std::string> Apply(
      ResourceType type, envoy::service::discovery::v3::DiscoveryResponse& r,
      AuthoritiesReaching reaching, const ApplyOptions& options);

  // Every does-not-exist clock forgotten (the stream ended).
  void ForgetTimers();

  // Every name of every type, in type order, each by name; with each one's
  // accepted form if `with_contents` (shared, not copied).
  std::vector<ResourceSnapshot> Snapshot(bool with_contents) const;

 private:
  std::array<TypeState, kResourceTypes> types_;
};

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_RESOURCE_CACHE_H_
