#include "src/discovery/xds/xds_resource_cache.h"

#include <grpc/support/log.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "envoy/service/discovery/v3/discovery.pb.h"
#include "src/base/utf8.h"

namespace mesh::internal::xds {
namespace {

constexpr char kResourceWrapper[] =
    "type.googleapis.com/envoy.service.discovery.v3.Resource";

}  // namespace

const char* StateName(ResourceStatus::State state) {
  switch (state) {
    case ResourceStatus::State::kRequested:
      return "REQUESTED";
    case ResourceStatus::State::kDoesNotExist:
      return "DOES_NOT_EXIST";
    case ResourceStatus::State::kAcked:
      return "ACKED";
    case ResourceStatus::State::kNacked:
      return "NACKED";
  }
  return "";
}

CachedResource* ResourceCache::Find(ResourceType type,
                                    const std::string& name) {
  auto& entries = of(type).entries;
  auto found = entries.find(name);
  return found == entries.end() ? nullptr : &found->second;
}

const CachedResource* ResourceCache::Find(ResourceType type,
                                          const std::string& name) const {
  const auto& entries = of(type).entries;
  auto found = entries.find(name);
  return found == entries.end() ? nullptr : &found->second;
}

bool ResourceCache::SetNames(ResourceType type, std::set<std::string> names) {
  TypeState& state = of(type);
  if (names == state.names) return false;
  for (auto it = state.entries.begin(); it != state.entries.end();) {
    if (names.count(it->first) == 0) {
      it = state.entries.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& name : names) state.entries.try_emplace(name);
  state.names = std::move(names);
  return true;
}

std::vector<std::string> ResourceCache::Apply(
    ResourceType type, envoy::service::discovery::v3::DiscoveryResponse& r,
    AuthoritiesReaching reaching, const ApplyOptions& options) {
  TypeState& state = of(type);
  std::vector<std::string> errors;
  std::set<std::string> seen;
  const absl::Time now = absl::Now();
  // What each resource's status (CSDS, Describe) says of the version: at
  // most 256 bytes of it (a server's 1 MiB version, copied into each of
  // 10,000 resources, would cost 10 GB). The ACK echoes it whole.
  const std::string version_quote = QuotedText(r.version_info());
  for (int i = 0; i < r.resources_size(); ++i) {
    google::protobuf::Any* any = r.mutable_resources(i);
    envoy::service::discovery::v3::Resource wrapper;
    if (any->type_url() == kResourceWrapper) {
      if (!any->UnpackTo(&wrapper)) {
        errors.push_back(absl::StrCat("resource index ", i,
                                      ": cannot parse a Resource wrapper"));
        continue;
      }
      any = wrapper.mutable_resource();
    }
    if (any->type_url() != r.type_url()) {
      errors.push_back(absl::StrCat(
          "resource index ", i, ": type '", QuotedText(any->type_url()),
          "' in a response of '", QuotedText(r.type_url()), "'"));
      continue;
    }
    DecodedResource d = DecodeResource(
        type, *any,
        [&state](const std::string& name) {
          return state.entries.count(name) != 0;
        },
        *options.providers, reaching);
    if (d.not_asked) continue;  // ignored
    if (d.name.empty() && !d.resource.ok()) {
      errors.push_back(absl::StrCat("resource index ", i, ": ",
                                    d.resource.status().message()));
      continue;
    }
    if (!seen.insert(d.name).second) {
      errors.push_back(absl::StrCat(TypeName(type), " '", QuotedText(d.name),
                                    "': sent twice"));
      continue;
    }
    CachedResource* e = Find(type, d.name);
    if (e == nullptr) continue;  // not asked for: ignored
    if (!d.resource.ok()) {
      errors.push_back(absl::StrCat(TypeName(type), " '", QuotedText(d.name),
                                    "': ", d.resource.status().message()));
      e->status.state = ResourceStatus::State::kNacked;
      e->status.error = std::string(d.resource.status().message());
      e->status.nacked_version = version_quote;
      e->status.nacked_at = now;
      continue;
    }
    e->timer = 0;
    if (e->resource == nullptr || e->bytes == nullptr || *e->bytes != d.bytes) {
      e->resource = std::make_shared<const AnyResource>(*std::move(d.resource));
      e->bytes = std::make_shared<const std::string>(std::move(d.bytes));
    }
    e->status.state = ResourceStatus::State::kAcked;
    e->status.version = version_quote;
    e->status.updated = now;
    e->status.error.clear();
    e->status.nacked_version.clear();
    e->status.nacked_at = absl::Time();
    e->status.has_resource = true;
  }
  // LDS and CDS responses hold the whole set: a name left out is gone.
  if (type != ResourceType::kListener && type != ResourceType::kCluster) {
    return errors;
  }
  for (auto& [name, e] : state.entries) {
    // A name not had yet waits for its clock: this response may predate
    // the request that named it.
    if (seen.count(name) != 0 || e.resource == nullptr) continue;
    if (options.ignore_resource_deletion) {
      // Said again by every response that leaves it out: one line a period
      // for all of them.
      uint64_t held_back = 0;
      if (options.log->Admit("left out, kept", &held_back)) {
        gpr_log(GPR_INFO,
                "mesh: xds: %s '%s' left out of a response; kept "
                "(ignore_resource_deletion)%s",
                TypeName(type), QuotedText(name).c_str(),
                LogLimiter::HeldBack(held_back).c_str());
      }
      continue;
    }
    gpr_log(GPR_INFO, "mesh: xds: %s '%s' deleted by the server",
            TypeName(type), QuotedText(name).c_str());
    e.timer = 0;
    e.resource = nullptr;
    e.bytes = nullptr;
    e.status.state = ResourceStatus::State::kDoesNotExist;
    e.status.has_resource = false;
  }
  return errors;
}

void ResourceCache::ForgetTimers() {
  for (TypeState& t : types_) {
    for (auto& [name, e] : t.entries) e.timer = 0;
  }
}

std::vector<ResourceSnapshot> ResourceCache::Snapshot(
    bool with_contents) const {
  std::vector<ResourceSnapshot> out;
  for (ResourceType type : kAllResourceTypes) {
    for (const auto& [name, e] : of(type).entries) {
      ResourceSnapshot& r = out.emplace_back();
      r.type = type;
      r.name = name;
      r.status = e.status;
      if (with_contents && e.resource != nullptr) r.contents = e.bytes;
    }
  }
  return out;
}

}  // namespace mesh::internal::xds
