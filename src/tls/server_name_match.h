// The server-name check of EndpointTls::server_names: whether a server's
// certificate carries a subject alternative name one of the matchers
// accepts (gRFC A29's SAN check: DNS, URI, email and IP names; an exact
// match also accepts a wildcard DNS name for one label).
//
//   PresentedNames names{.dns = {"*.web.ns.svc"}};
//   MatchesServerNames(tls.server_names, names);  // exact "a.web.ns.svc": true
//
// Thread-safe (pure functions).
#ifndef MESH_SRC_TLS_SERVER_NAME_MATCH_H_
#define MESH_SRC_TLS_SERVER_NAME_MATCH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mesh/tls.h"
#include "src/base/internal_export.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace mesh::internal {

// The subject alternative names of a certificate, by kind.
struct PresentedNames {
  std::vector<std::string> dns;
  std::vector<std::string> uri;
  std::vector<std::string> email;
  std::vector<std::string> ip;
};

// The matchers with their regexes compiled once: a verifier's, used at
// every handshake. Thread-safe (const after construction).
class ServerNameCheck {
 public:
  explicit ServerNameCheck(std::vector<ServerNameMatcher> matchers);
  ~ServerNameCheck();
  ServerNameCheck(const ServerNameCheck&) = delete;
  ServerNameCheck& operator=(const ServerNameCheck&) = delete;

  // True if there are no matchers, or one of them accepts one of the names
  // (empty names never match; a regex that does not compile never does).
  bool Matches(const PresentedNames& names) const;
  const std::vector<ServerNameMatcher>& matchers() const { return matchers_; }

 private:
  bool MatchesOne(size_t i, const std::string& name, bool dns) const;

  const std::vector<ServerNameMatcher> matchers_;
  // Per matcher: the compiled regex of a kRegex one, else null.
  std::vector<std::unique_ptr<re2::RE2>> regexes_;
};

// ServerNameCheck(matchers).Matches(names), compiling as it goes.
bool MatchesServerNames(const std::vector<ServerNameMatcher>& matchers,
                        const PresentedNames& names);

// INVALID_ARGUMENT for a matcher that can never work: an empty value, or a
// regex that does not compile (RE2's reason), or ignore_case with a regex.
MESH_INTERNAL_EXPORT absl::Status ValidateServerNameMatcher(
    const ServerNameMatcher& matcher);

// "exact 'a' or prefix 'spiffe://x/'" for messages; "any name" when empty.
std::string DescribeMatchers(const std::vector<ServerNameMatcher>& matchers);

// "DNS:a, URI:b, email:c, IP:d"; "no subject alternative names" when empty.
std::string DescribePresented(const PresentedNames& names);

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_SERVER_NAME_MATCH_H_
