#include "src/channel/endpoint_admission.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "src/model/endpoint_set.h"
#include "src/model/endpoint_tls.h"
#include "src/tls/server_name_match.h"

namespace mesh::internal {

absl::Status ValidateEndpointTls(const std::vector<Endpoint>& endpoints) {
  const EndpointTls* last = nullptr;
  for (const Endpoint& e : endpoints) {
    if (e.tls == nullptr || e.tls.get() == last) continue;
    last = e.tls.get();
    for (const ServerNameMatcher& m : e.tls->server_names) {
      if (absl::Status s = ValidateServerNameMatcher(m); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "endpoint '", e.address, "': tls.server_names: ", s.message()));
      }
    }
  }
  return absl::OkStatus();
}

AdmittedUpdate AdmitEndpoints(const EndpointUpdate& update,
                              const DestinationTls& tls) {
  AdmittedUpdate out;
  if (update.kind != EndpointUpdate::Kind::kReset &&
      update.kind != EndpointUpdate::Kind::kAdd) {
    return out;
  }
  // An invalid list passes unfiltered and unrejected: the set rejects it,
  // naming the bad endpoint even if it is one that would be left out. The
  // list is checked here only when that decides something, so that an
  // update that is not filtered is checked once (by the set), not twice.
  const bool filters = tls.require_identity || !tls.default_transport;
  if (filters && !ValidateEndpointList(update.endpoints).ok()) return out;
  out.rejected = ValidateEndpointTls(update.endpoints);
  if (!out.rejected.ok() && !filters &&
      !ValidateEndpointList(update.endpoints).ok()) {
    out.rejected = absl::OkStatus();
  }
  if (!out.rejected.ok() || !filters) return out;
  auto left_out_because = [&tls](const Endpoint& e) -> const char* {
    if (tls.require_identity && e.tls_identity.empty() && e.tls == nullptr) {
      return "without a TLS identity left out "
             "(MeshOptions.identity.require_identity)";
    }
    if (!tls.default_transport && e.tls != nullptr) {
      return "with the control plane's TLS (EndpointTls) left out: "
             "MeshOptions.transport_factory's transport does not carry it "
             "out, and would call them in plaintext";
    }
    return nullptr;
  };
  out.filtered = true;
  out.kept = update;
  const char* reason = nullptr;
  for (const Endpoint& e : update.endpoints) {
    if (const char* r = left_out_because(e); r != nullptr) {
      out.left_out.push_back(e.address);
      if (reason == nullptr) reason = r;
    }
  }
  out.kept.endpoints.erase(
      std::remove_if(
          out.kept.endpoints.begin(), out.kept.endpoints.end(),
          [&](const Endpoint& e) { return left_out_because(e) != nullptr; }),
      out.kept.endpoints.end());
  if (!out.left_out.empty()) {
    out.why = absl::StrCat(out.left_out.size(), " endpoint(s) ", reason,
                           ", e.g. ", out.left_out.front());
  }
  return out;
}

}  // namespace mesh::internal
