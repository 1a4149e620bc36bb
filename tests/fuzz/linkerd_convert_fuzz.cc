// libFuzzer target for the Linkerd wire → model conversion
// (src/discovery/linkerd/convert.h): whatever a control plane (or an attacker
// in its place) sends must convert or be rejected, never crash, and what
// converts must satisfy the model's rules. The first input byte picks the
// message, by its remainder modulo 3: 0 → Update, 1 → DestinationProfile,
// 2 → OutboundPolicy (convert_policy.h, then compiled into a route table
// and matched); the rest is the message.
//
// Run through scripts/fuzz.sh. A violated invariant aborts with a message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "linkerd/destination.pb.h"
#include "linkerd/outbound.pb.h"
#include "re2/re2.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/linkerd/convert_policy.h"
#include "src/model/address.h"
#include "src/route/retry_policy.h"
#include "src/route/route_table.h"
#include "tests/fuzz/fuzz_require.h"

namespace {

namespace dst = ::io::linkerd::proxy::destination;
using mesh::internal::linkerd::ConvertProfile;
using mesh::internal::linkerd::ConvertUpdate;
using mesh::internal::linkerd::ProfileConversion;

// The address is what FormatTcpAddress promises: parseable, and already in
// the canonical form the endpoint set keys on.
void CheckAddress(const std::string& address) {
  absl::StatusOr<mesh::internal::SocketAddress> parsed =
      mesh::internal::SocketAddress::Parse(address);
  REQUIRE(parsed.ok(), absl::StrCat("address does not parse: ", address));
  std::string canonical = parsed->ToString();
  REQUIRE(canonical == address,
          absl::StrCat("address not canonical: ", address, " vs ", canonical));
}

void CheckUpdate(const dst::Update& wire) {
  absl::StatusOr<mesh::EndpointUpdate> update = ConvertUpdate(wire);
  if (!update.ok()) {
    REQUIRE(update.status().code() == absl::StatusCode::kInvalidArgument,
            "rejection is not INVALID_ARGUMENT");
    REQUIRE(!update.status().message().empty(), "rejection without message");
    return;
  }
  switch (update->kind) {
    case mesh::EndpointUpdate::Kind::kAdd: {
      REQUIRE(wire.has_add(), "Add from a message without add");
      absl::flat_hash_set<std::string> seen;
      for (const mesh::Endpoint& e : update->endpoints) {
        REQUIRE(mesh::ValidateEndpoint(e).ok(),
                absl::StrCat("invalid endpoint ", e.address));
        CheckAddress(e.address);
        REQUIRE(seen.insert(e.address).second,
                absl::StrCat("duplicate address ", e.address));
      }
      REQUIRE(update->endpoints.size() <=
                  static_cast<size_t>(wire.add().addrs_size()),
              "more endpoints than addresses");
      break;
    }
    case mesh::EndpointUpdate::Kind::kRemove:
      REQUIRE(wire.has_remove(), "Remove from a message without remove");
      REQUIRE(update->addresses.size() ==
                  static_cast<size_t>(wire.remove().addrs_size()),
              "Remove lost addresses");
      for (const std::string& a : update->addresses) CheckAddress(a);
      break;
    case mesh::EndpointUpdate::Kind::kNoEndpoints:
      REQUIRE(wire.has_no_endpoints(), "NoEndpoints from the wrong message");
      REQUIRE(update->exists == wire.no_endpoints().exists(), "exists lost");
      break;
    case mesh::EndpointUpdate::Kind::kReset:
      mesh::fuzz::Fail("ConvertUpdate never makes a Reset");
  }
}

void CheckRequestMatch(const mesh::RequestMatch& m) {
  using Kind = mesh::RequestMatch::Kind;
  switch (m.kind) {
    case Kind::kAll:
    case Kind::kAny:
      break;
    case Kind::kNot:
      REQUIRE(m.children.size() == 1, "not without exactly one child");
      break;
    case Kind::kPath:
      REQUIRE(absl::StripAsciiWhitespace(m.path_regex) == m.path_regex,
              "regex not trimmed: ", m.path_regex);
      REQUIRE(RE2(m.path_regex, RE2::Quiet).ok(),
              absl::StrCat("regex does not compile: ", m.path_regex));
      break;
    case Kind::kMethod:
      REQUIRE(!m.method.empty(), "empty method");
      break;
    case Kind::kHeader:
      mesh::fuzz::Fail("Linkerd profiles have no header matches");
    case Kind::kPathPrefix:
    case Kind::kPathExact:
    case Kind::kFraction:
    case Kind::kQueryParam:
      // xDS's and HTTPRoute's forms: a profile's path is a regex, and it has no
      // fractions.
      mesh::fuzz::Fail(
          "Linkerd profiles have no prefix, exact-path, fraction or "
          "query parameter matches");
  }
  for (const mesh::RequestMatch& c : m.children) CheckRequestMatch(c);
}

void CheckResponseMatch(const mesh::ResponseMatch& m) {
  if (m.kind == mesh::ResponseMatch::Kind::kAll ||
      m.kind == mesh::ResponseMatch::Kind::kAny) {
    REQUIRE(!m.children.empty(), "empty all/any in a response match");
  }
  if (m.kind == mesh::ResponseMatch::Kind::kNot) {
    REQUIRE(m.children.size() == 1, "not without exactly one child");
  }
  if (m.kind == mesh::ResponseMatch::Kind::kStatus) {
    REQUIRE(m.min >= 100 && m.max <= 999 && m.min <= m.max,
            absl::StrCat("status range ", m.min, "..", m.max));
  }
  for (const mesh::ResponseMatch& c : m.children) CheckResponseMatch(c);
}

void CheckProfile(const dst::DestinationProfile& wire) {
  ProfileConversion p = ConvertProfile(wire);
  const mesh::ServiceConfig& c = p.config;
  for (const mesh::Route& r : c.routes) {
    CheckRequestMatch(r.condition);
    for (const mesh::ResponseClass& rc : r.response_classes) {
      CheckResponseMatch(rc.condition);
    }
    REQUIRE(r.timeout > absl::ZeroDuration(), "timeout not positive");
    auto label = r.metrics_labels.find("route");
    REQUIRE(r.name == (label == r.metrics_labels.end() ? "" : label->second),
            "route name is not its route label");
  }
  if (c.retry_budget.has_value()) {
    REQUIRE(
        c.retry_budget->retry_ratio >= 0 && c.retry_budget->retry_ratio <= 1000,
        "retry ratio out of range");
    REQUIRE(c.retry_budget->ttl >= absl::Seconds(1) &&
                c.retry_budget->ttl <= absl::Seconds(60),
            "ttl out of range");
  }
  for (const mesh::WeightedBackend& b : c.backends) {
    REQUIRE(b.weight > 0, "backend weight 0");
    REQUIRE(mesh::internal::ValidateDestination(b.authority).ok(),
            absl::StrCat("bad backend authority ", b.authority));
  }
  if (c.endpoint.has_value()) {
    REQUIRE(mesh::ValidateEndpoint(*c.endpoint).ok(), "invalid endpoint");
    CheckAddress(c.endpoint->address);
  }
  REQUIRE(c.fully_qualified_name == wire.fully_qualified_name(), "fqn lost");
  REQUIRE(c.opaque_protocol == wire.opaque_protocol(), "opaque lost");

  // Nothing appears from nowhere, and everything left out is accounted for
  // by at least one line.
  const size_t routes = static_cast<size_t>(wire.routes_size());
  const size_t backends = static_cast<size_t>(wire.dst_overrides_size());
  REQUIRE(c.routes.size() <= routes, "more routes than sent");
  REQUIRE(c.backends.size() <= backends, "more backends than sent");
  REQUIRE(wire.has_retry_budget() || !c.retry_budget, "a budget from nowhere");
  REQUIRE(wire.has_endpoint() || !c.endpoint, "an endpoint from nowhere");
  const size_t lost = (routes - c.routes.size()) +
                      (backends - c.backends.size()) +
                      (wire.has_retry_budget() && !c.retry_budget ? 1 : 0) +
                      (wire.has_endpoint() && !c.endpoint ? 1 : 0);
  REQUIRE(p.dropped.size() >= lost, "a part was dropped without a line");
  for (const std::string& line : p.dropped) {
    REQUIRE(!line.empty(), "empty dropped line");
  }
}

}  // namespace

// protobuf logs every string field with invalid UTF-8 it refuses to parse;
// at tens of thousands of inputs a second that is only noise.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

// A policy converts or is refused as INVALID_ARGUMENT; what converts
// compiles whole into a route table (the converter has checked every
// regex, name and value: only the table's limits may leave a route out),
// its backends, retries and faults are valid, and a request matches.
void CheckPolicy(const io::linkerd::proxy::outbound::OutboundPolicy& wire) {
  absl::StatusOr<mesh::internal::linkerd::PolicyConversion> p =
      mesh::internal::linkerd::ConvertPolicy(wire, "books.ns:8080");
  if (!p.ok()) {
    REQUIRE(p.status().code() == absl::StatusCode::kInvalidArgument,
            "refusal is not INVALID_ARGUMENT");
    REQUIRE(!p.status().message().empty(), "refusal without message");
    return;
  }
  const mesh::ServiceConfig& c = p->config;
  for (const mesh::Route& r : c.routes) {
    REQUIRE(r.timeout > absl::ZeroDuration(), "timeout not positive");
    REQUIRE(mesh::internal::ValidateRetryPolicy(r.retry_policy).ok(),
            "invalid retry policy");
    REQUIRE(!r.is_retryable || r.retry_policy.max_attempts >= 1,
            "retryable without attempts");
    REQUIRE(r.fault.abort_per_million <= 1'000'000, "abort share > 100%");
    REQUIRE(r.fault.abort_per_million == 0 ||
                r.fault.abort_code != absl::StatusCode::kOk,
            "an abort with OK");
    for (const mesh::WeightedBackend& b : r.backends) {
      REQUIRE(b.weight > 0, "backend weight 0");
      REQUIRE(mesh::internal::ValidateDestination(b.authority).ok(),
              absl::StrCat("bad backend authority ", b.authority));
    }
  }
  std::vector<std::string> dropped;
  auto table = mesh::internal::RouteTable::Build(c, &dropped);
  for (const std::string& line : dropped) {
    REQUIRE(absl::StrContains(line, "RouteLimits::"),
            absl::StrCat("the table dropped what the converter kept: ", line));
  }
  std::vector<std::pair<std::string, std::string>> headers = {{"x", "1"}};
  table->Match({"POST", "/books.Library/GetBook?page=1", &headers});
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const void* body = data + 1;
  const int body_size = static_cast<int>(size - 1);
  if (data[0] % 3 == 0) {
    dst::Update update;
    if (update.ParseFromArray(body, body_size)) CheckUpdate(update);
  } else if (data[0] % 3 == 1) {
    dst::DestinationProfile profile;
    if (profile.ParseFromArray(body, body_size)) CheckProfile(profile);
  } else {
    io::linkerd::proxy::outbound::OutboundPolicy policy;
    if (policy.ParseFromArray(body, body_size)) CheckPolicy(policy);
  }
  return 0;
}
