#include "src/discovery/dns/dns_answer.h"

#include <ares.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/base/utf8.h"

namespace mesh::internal {
namespace {

constexpr size_t kHeaderSize = 12;   // RFC 1035 4.1.1
constexpr size_t kRecordFixed = 10;  // type, class, TTL, RDLENGTH
constexpr int kClassIn = 1;
constexpr int kTypeCname = 5;
constexpr size_t kChainShown = 8;  // names in a message, at most

uint32_t Read16(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) << 8 | p[1];
}

uint32_t Read32(const unsigned char* p) {
  return Read16(p) << 16 | Read16(p + 2);
}

absl::Status Malformed(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat("malformed DNS answer: ", what));
}

// The (possibly compressed) name at `at`, with c-ares's own reader, which
// bounds pointer chains; `*next` is where the name's bytes end.
absl::Status ReadName(const unsigned char* answer, size_t size, size_t at,
                      std::string* name, size_t* next) {
  if (at >= size) return Malformed("a name runs past the end");
  char* text = nullptr;
  long length = 0;  // NOLINT(runtime/int): c-ares's type
  const int status = ares_expand_name(answer + at, answer,
                                      static_cast<int>(size), &text, &length);
  if (status != ARES_SUCCESS) {
    return Malformed(absl::StrCat("a name: ", ares_strerror(status)));
  }
  // Names compare without regard to case (RFC 4343).
  *name = absl::AsciiStrToLower(text);
  ares_free_string(text);
  *next = at + static_cast<size_t>(length);
  return absl::OkStatus();
}

// RFC 2181 8: a TTL with the top bit set is zero.
absl::Duration Ttl(uint32_t seconds) {
  return absl::Seconds(seconds > 0x7fffffffu ? 0 : seconds);
}

struct Cname {
  std::string target;
  absl::Duration ttl;
};

struct Address {
  std::string owner;
  std::string text;
  absl::Duration ttl;
};

}  // namespace

absl::StatusOr<AddressRecords> ReadAddressAnswer(const unsigned char* answer,
                                                 size_t size, int type) {
  if (size < kHeaderSize) return Malformed("shorter than a header");
  if (Read16(answer + 4) != 1) return Malformed("not one question");
  const uint32_t records = Read16(answer + 6);
  AddressRecords out;
  size_t at = kHeaderSize;
  if (absl::Status s = ReadName(answer, size, at, &out.name, &at); !s.ok()) {
    return s;
  }
  at += 4;  // QTYPE, QCLASS
  // The first CNAME of each owner (RFC 2181 10.1 allows one), and every
  // address of the type asked.
  absl::flat_hash_map<std::string, Cname> cnames;
  std::vector<Address> addresses;
  for (uint32_t i = 0; i < records; ++i) {
    std::string owner;
    if (absl::Status s = ReadName(answer, size, at, &owner, &at); !s.ok()) {
      return s;
    }
    if (at + kRecordFixed > size)
      return Malformed("a record runs past the end");
    const int rr_type = static_cast<int>(Read16(answer + at));
    const int rr_class = static_cast<int>(Read16(answer + at + 2));
    const absl::Duration ttl = Ttl(Read32(answer + at + 4));
    const size_t length = Read16(answer + at + 8);
    const size_t data = at + kRecordFixed;
    if (data + length > size) return Malformed("a record runs past the end");
    at = data + length;
    if (rr_class != kClassIn) continue;
    if (rr_type == kTypeCname) {
      std::string target;
      size_t end = 0;
      if (absl::Status s = ReadName(answer, size, data, &target, &end);
          !s.ok()) {
        return s;
      }
      cnames.try_emplace(std::move(owner), Cname{std::move(target), ttl});
    } else if (rr_type == type &&
               length == (type == kDnsA ? sizeof(in_addr) : sizeof(in6_addr))) {
      char text[INET6_ADDRSTRLEN] = {0};
      inet_ntop(type == kDnsA ? AF_INET : AF_INET6, answer + data, text,
                sizeof(text));
      addresses.push_back({std::move(owner), text, ttl});
    }
  }
  // Follow the chain; every name at most once, so it ends.
  bool any_ttl = false;
  auto take_ttl = [&](absl::Duration ttl) {
    out.ttl = any_ttl ? std::min(out.ttl, ttl) : ttl;
    any_ttl = true;
  };
  absl::flat_hash_set<std::string> seen = {out.name};
  const std::string* last = &out.name;
  for (auto it = cnames.find(*last); it != cnames.end();
       it = cnames.find(*last)) {
    out.cnames.push_back(it->second.target);
    take_ttl(it->second.ttl);
    if (!seen.insert(it->second.target).second) {
      return absl::UnavailableError(
          absl::StrCat("the CNAME chain could not be followed: it loops (",
                       DescribeChain(out.name, out.cnames), ")"));
    }
    last = &out.cnames.back();
  }
  for (Address& a : addresses) {
    if (a.owner != *last) continue;
    out.addresses.push_back(std::move(a.text));
    take_ttl(a.ttl);
  }
  return out;
}

std::string DescribeChain(const std::string& name,
                          const std::vector<std::string>& cnames) {
  std::string out = PrintableText(name);
  for (size_t i = 0; i < cnames.size(); ++i) {
    if (i + 1 == kChainShown && cnames.size() > kChainShown) {
      absl::StrAppend(&out, " -> (", cnames.size() - kChainShown, " more)");
      i = cnames.size() - 1;
    }
    absl::StrAppend(&out, " -> ", PrintableText(cnames[i]));
  }
  return out;
}

}  // namespace mesh::internal
