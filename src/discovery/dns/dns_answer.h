// ReadAddressAnswer: what one DNS answer to an A or AAAA question says
// about the question's name — the CNAME chain followed from it through the
// answer section (RFC 1034 3.6.2; the records in any order) and the
// addresses of the chain's last name.
//
// c-ares 1.18.1's ares_getaddrinfo cannot tell an answer made of CNAMEs
// that lead nowhere (a loop a -> b -> a, a chain to a name whose records the
// server did not give) from a name without records: both end ARES_ENODATA
// with no result, so a loop used to drop the last good addresses. The raw
// answer (ares_search) read here keeps the difference.
//
//   absl::StatusOr<AddressRecords> r = ReadAddressAnswer(abuf, alen, kDnsA);
//   if (r.ok() && r->addresses.empty() && !r->cnames.empty()) ...  //
//   unfollowed
//
// Pure function: thread-safe.
#ifndef MESH_SRC_DISCOVERY_DNS_DNS_ANSWER_H_
#define MESH_SRC_DISCOVERY_DNS_DNS_ANSWER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace mesh::internal {

// The question types read (RFC 1035 3.2.2, RFC 3596).
constexpr int kDnsA = 1;
constexpr int kDnsAaaa = 28;

struct AddressRecords {
  // The question's name, as the answer spells it.
  std::string name;
  // The names the CNAMEs lead to from `name`, in order; empty when `name`
  // has no CNAME in the answer.
  std::vector<std::string> cnames;
  // The addresses of the chain's last name ("10.0.0.1", "::1"), of the
  // type asked, in the answer's order. Empty with `cnames` set: the chain
  // cannot be followed to an address with this answer.
  std::vector<std::string> addresses;
  // The smallest TTL of the chain's CNAMEs and of the addresses (zero when
  // neither): the answer holds as long as all of them do.
  absl::Duration ttl = absl::ZeroDuration();
};

// `answer`: a whole DNS message (header on) answering one `type` question.
// UNAVAILABLE naming the problem: a malformed message, or CNAMEs that loop
// ("the CNAME chain could not be followed: it loops (a -> b -> a)").
absl::StatusOr<AddressRecords> ReadAddressAnswer(const unsigned char* answer,
                                                 size_t size, int type);

// "a -> b -> c" for messages: printable, at most a few names.
std::string DescribeChain(const std::string& name,
                          const std::vector<std::string>& cnames);

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_DNS_DNS_ANSWER_H_
