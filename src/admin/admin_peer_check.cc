#include "src/admin/admin_peer_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "src/tap/observe_server.h"
#include "src/tls/certificate_check.h"

namespace mesh::internal {
namespace {

// GnuTLS's words for a verification status ("The certificate is NOT
// trusted. The certificate issuer is unknown.").
std::string StatusText(unsigned int status) {
  gnutls_datum_t text = {nullptr, 0};
  if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509,
                                                   &text, 0) < 0 ||
      text.data == nullptr) {
    return absl::StrCat("verification status ", status);
  }
  std::string out(reinterpret_cast<const char*>(text.data), text.size);
  gnutls_free(text.data);
  return out;
}

}  // namespace

absl::Status CheckAdminPeer(gnutls_session_t session,
                            const std::vector<std::string>& allowed) {
  unsigned int count = 0;
  const gnutls_datum_t* chain =
      session != nullptr ? gnutls_certificate_get_peers(session, &count)
                         : nullptr;
  if (chain == nullptr || count == 0) {
    return absl::PermissionDeniedError(
        "presented no client certificate; the admin page serves clients "
        "whose certificate names an allowed identity");
  }
  unsigned int status = 0;
  const int verified = gnutls_certificate_verify_peers2(session, &status);
  if (verified < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("its client certificate could not be verified: ",
                     gnutls_strerror(verified)));
  }
  if (status != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "its client certificate is refused: ", StatusText(status)));
  }
  absl::StatusOr<CertificateFacts> leaf = ReadDerCertificate(absl::string_view(
      reinterpret_cast<const char*>(chain[0].data), chain[0].size));
  if (!leaf.ok()) {
    return absl::PermissionDeniedError(
        absl::StrCat("its client certificate: ", leaf.status().message()));
  }
  std::vector<std::string> presented = leaf->uri_names;
  presented.insert(presented.end(), leaf->dns_names.begin(),
                   leaf->dns_names.end());
  if (!leaf->subject_cn.empty()) presented.push_back(leaf->subject_cn);
  if (IsAllowedIdentity(presented, allowed)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      presented.empty()
          ? std::string("its client certificate names no identity")
          : absl::StrCat("identity ", absl::StrJoin(presented, ", "),
                         " is not allowed to see the admin page"));
}

}  // namespace mesh::internal
