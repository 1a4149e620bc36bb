// libFuzzer target: any bytes as a DNS server's answer to an A or AAAA
// question (ReadAddressAnswer, which reads what a DNS server sends mesh).
// Each input is read or refused, never crashes or reads past its end
// (ASan); a chain that is followed never names a name twice; addresses are
// of the type asked; messages stay printable and bounded.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "src/discovery/dns/dns_answer.h"
#include "tests/fuzz/fuzz_require.h"

namespace mesh::internal {
namespace {

void Check(const uint8_t* data, size_t size, int type) {
  absl::StatusOr<AddressRecords> r = ReadAddressAnswer(data, size, type);
  if (!r.ok()) {
    REQUIRE(r.status().code() == absl::StatusCode::kUnavailable,
            "refused with another code: ", r.status().ToString());
    REQUIRE(r.status().message().size() < 4096, "an unbounded message");
    return;
  }
  std::set<std::string> names = {r->name};
  for (const std::string& n : r->cnames) {
    REQUIRE(names.insert(n).second, "a followed chain names ", n, " twice");
  }
  for (const std::string& a : r->addresses) {
    unsigned char bytes[16];
    REQUIRE(
        inet_pton(type == kDnsA ? AF_INET : AF_INET6, a.c_str(), bytes) == 1,
        "an address of the other type or no address: ", a);
  }
  REQUIRE(r->ttl >= absl::ZeroDuration(), "a negative TTL");
}

}  // namespace
}  // namespace mesh::internal

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the question type; the rest is the message.
  const int type =
      data[0] % 2 == 0 ? mesh::internal::kDnsA : mesh::internal::kDnsAaaa;
  mesh::internal::Check(data + 1, size - 1, type);
  return 0;
}
