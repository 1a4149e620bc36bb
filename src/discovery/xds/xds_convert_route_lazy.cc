// RDS converted by what a call can reach (xds_convert.h): a
// RouteConfiguration's bytes are read with protobuf's CodedInputStream as
// far as choosing a virtual host needs — each virtual host's name, domains
// and number of routes — and only the chosen virtual hosts are parsed and
// converted whole. Field numbers: RouteConfiguration name 1, virtual_hosts
// 2; VirtualHost name 1, domains 2, routes 3.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "envoy/config/route/v3/route.pb.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "src/base/utf8.h"
#include "src/discovery/xds/xds_convert.h"

namespace mesh::internal::xds {
namespace {

using google::protobuf::io::CodedInputStream;

constexpr uint32_t kLengthDelimited = 2;

constexpr uint32_t kStartGroup = 3;
constexpr uint32_t kEndGroup = 4;
// Protobuf's own bound on nesting, which groups count against.
constexpr int kMaxGroupDepth = 100;

// Skips the field whose tag was just read; false for a malformed one. A
// group (an unknown field of the old encoding, which protobuf's parser
// keeps) is skipped to its end tag, nested at most kMaxGroupDepth deep.
bool SkipField(CodedInputStream& in, uint32_t tag, int depth = 0) {
  switch (tag & 7) {
    case kStartGroup: {
      if (depth >= kMaxGroupDepth) return false;
      while (true) {
        const uint32_t inner = in.ReadTag();
        if (inner == 0) return false;
        if ((inner & 7) == kEndGroup) return (inner >> 3) == (tag >> 3);
        if (!SkipField(in, inner, depth + 1)) return false;
      }
    }
    case 0: {
      uint64_t ignored;
      return in.ReadVarint64(&ignored);
    }
    case 1:
      return in.Skip(8);
    case kLengthDelimited: {
      uint32_t size;
      return in.ReadVarint32(&size) && in.Skip(static_cast<int>(size));
    }
    case 5:
      return in.Skip(4);
    default:
      return false;
  }
}

// A length-delimited field's bytes, as a view into `bytes` (what `in`
// reads).
bool ReadSlice(CodedInputStream& in, absl::string_view bytes,
               absl::string_view* out) {
  uint32_t size;
  if (!in.ReadVarint32(&size)) return false;
  const size_t at = static_cast<size_t>(in.CurrentPosition());
  if (size > bytes.size() - at) return false;
  *out = bytes.substr(at, size);
  return in.Skip(static_cast<int>(size));
}

// Calls `field(number, slice)` for each length-delimited field of the
// message in `bytes` numbered in `length_delimited`, skipping the others;
// false if the bytes are not a well-formed message (as protobuf's parser
// would refuse them).
template <typename OnField>
bool ForEachField(absl::string_view bytes,
                  std::initializer_list<int> length_delimited, OnField field) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  while (!in.ExpectAtEnd()) {
    // 0: a malformed tag (or field number 0), which protobuf refuses.
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return false;
    const int number = static_cast<int>(tag >> 3);
    // A known number with another wire type is an unknown field to
    // protobuf's parser, kept and skipped, as here.
    const bool known =
        (tag & 7) == kLengthDelimited &&
        std::find(length_delimited.begin(), length_delimited.end(), number) !=
            length_delimited.end();
    if (!known) {
      if (!SkipField(in, tag)) return false;
      continue;
    }
    absl::string_view slice;
    if (!ReadSlice(in, bytes, &slice)) return false;
    if (!field(number, slice)) return false;
  }
  return static_cast<size_t>(in.CurrentPosition()) == bytes.size();
}

absl::Status NotA(absl::string_view type) {
  return absl::InvalidArgumentError(absl::StrCat("cannot parse a ", type));
}

// A virtual host whose bytes do not parse, relative to it.
absl::Status UnparsableVirtualHost() {
  return FieldError("contents",
                    "cannot parse as a envoy.config.route.v3.VirtualHost");
}

// A virtual host with its name, domains and routes count read; the rest
// kept as bytes.
absl::StatusOr<VirtualHostResource> ReadHead(absl::string_view bytes) {
  VirtualHostResource out;
  std::vector<std::string> domains;
  size_t routes = 0;
  // Strings must be UTF-8, as protobuf's parser requires of proto3.
  const bool read =
      ForEachField(bytes, {1, 2, 3}, [&](int number, absl::string_view slice) {
        if (number == 3) {
          ++routes;
          return true;
        }
        if (!IsValidUtf8(slice)) return false;
        if (number == 1) {
          out.name = std::string(slice);
        } else {
          domains.emplace_back(slice);
        }
        return true;
      });
  if (!read) return UnparsableVirtualHost();
  absl::StatusOr<std::vector<std::string>> converted = ConvertDomains(domains);
  if (!converted.ok()) return converted.status();
  out.domains = *std::move(converted);
  if (absl::Status s = CheckRouteCount(routes); !s.ok()) return s;
  out.wire = std::string(bytes);
  return out;
}

}  // namespace

absl::StatusOr<RouteConfigurationSlices> SliceRouteConfiguration(
    absl::string_view bytes) {
  RouteConfigurationSlices out;
  const bool read =
      ForEachField(bytes, {1, 2}, [&](int number, absl::string_view slice) {
        if (number == 2) {
          out.virtual_hosts.push_back(slice);
          return true;
        }
        if (!IsValidUtf8(slice)) return false;
        out.name = std::string(slice);
        return true;
      });
  if (!read) return NotA("envoy.config.route.v3.RouteConfiguration");
  return out;
}

absl::StatusOr<RouteConfigResource> ConvertRouteConfiguration(
    const RouteConfigurationSlices& slices, const ChooseVirtualHosts& now) {
  if (absl::Status s = CheckVirtualHostCount(slices.virtual_hosts.size());
      !s.ok()) {
    return s;
  }
  RouteConfigResource out;
  out.name = slices.name;
  out.virtual_hosts.reserve(slices.virtual_hosts.size());
  for (size_t i = 0; i < slices.virtual_hosts.size(); ++i) {
    absl::StatusOr<VirtualHostResource> head =
        ReadHead(slices.virtual_hosts[i]);
    if (!head.ok()) {
      return Within(absl::StrCat("virtual_hosts[", i, "]"), head.status());
    }
    out.virtual_hosts.push_back(*std::move(head));
  }
  std::vector<size_t> chosen;
  if (now == nullptr) {
    for (size_t i = 0; i < out.virtual_hosts.size(); ++i) chosen.push_back(i);
  } else {
    chosen = now(out);
  }
  for (size_t i : chosen) {
    if (i >= out.virtual_hosts.size() || out.virtual_hosts[i].wire.empty()) {
      continue;  // out of range, or chosen twice
    }
    absl::StatusOr<VirtualHostResource> whole =
        ConvertLazyVirtualHost(out.virtual_hosts[i]);
    if (!whole.ok()) {
      return Within(absl::StrCat("virtual_hosts[", i, "]"), whole.status());
    }
    out.virtual_hosts[i] = *std::move(whole);
  }
  return out;
}

absl::StatusOr<VirtualHostResource> ConvertLazyVirtualHost(
    const VirtualHostResource& lazy) {
  // On an arena: 250 routes are some thousands of small messages.
  google::protobuf::Arena arena;
  auto* vhost = google::protobuf::Arena::CreateMessage<
      envoy::config::route::v3::VirtualHost>(&arena);
  if (!vhost->ParseFromArray(lazy.wire.data(),
                             static_cast<int>(lazy.wire.size()))) {
    return UnparsableVirtualHost();
  }
  return ConvertVirtualHost(*vhost);
}

}  // namespace mesh::internal::xds
