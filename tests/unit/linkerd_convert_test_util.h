// Shared by the Linkerd conversion tests: printers for the model types they
// compare (the model has no equality for match trees, so tests compare these
// renderings of hand-built expected values with those of converted ones), and
// builders for wire messages.
#ifndef MESH_TESTS_UNIT_LINKERD_CONVERT_TEST_UTIL_H_
#define MESH_TESTS_UNIT_LINKERD_CONVERT_TEST_UTIL_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "linkerd/destination.pb.h"
#include "linkerd/http_types.pb.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"

namespace mesh {

// Found by GoogleTest through argument-dependent lookup.
inline void PrintTo(const Endpoint& e, std::ostream* os) {
  *os << "{" << e.address << " w=" << e.weight << " labels={"
      << absl::StrJoin(e.labels, ",", absl::PairFormatter("="))
      << "} tls=" << e.tls_identity
      << " hint=" << static_cast<int>(e.protocol_hint)
      << " authority=" << e.authority_override << "}";
}

inline void PrintTo(const EndpointUpdate& u, std::ostream* os) {
  *os << "{kind=" << static_cast<int>(u.kind) << " endpoints=[";
  for (const Endpoint& e : u.endpoints) PrintTo(e, os);
  *os << "] addresses=[" << absl::StrJoin(u.addresses, ",")
      << "] exists=" << u.exists << "}";
}

namespace testing_util {

inline std::string Describe(const RequestMatch& m) {
  std::vector<std::string> children;
  for (const RequestMatch& c : m.children) children.push_back(Describe(c));
  const std::string joined = absl::StrJoin(children, ", ");
  switch (m.kind) {
    case RequestMatch::Kind::kAll:
      return absl::StrCat("all(", joined, ")");
    case RequestMatch::Kind::kAny:
      return absl::StrCat("any(", joined, ")");
    case RequestMatch::Kind::kNot:
      return absl::StrCat("not(", joined, ")");
    case RequestMatch::Kind::kPath:
      return absl::StrCat("path(", m.path_regex, ")");
    case RequestMatch::Kind::kMethod:
      return absl::StrCat("method(", m.method, ")");
    case RequestMatch::Kind::kHeader:
      return absl::StrCat("header(", m.header.name, ")");
    case RequestMatch::Kind::kPathPrefix:
      return absl::StrCat("path_prefix(", m.path, ")");
    case RequestMatch::Kind::kPathExact:
      return absl::StrCat("path_exact(", m.path, ")");
    case RequestMatch::Kind::kFraction:
      return absl::StrCat("fraction(", m.per_million, ")");
    case RequestMatch::Kind::kQueryParam:
      return absl::StrCat("query(", m.header.name, ")");
  }
  return "?";
}

inline std::string Describe(const ResponseMatch& m) {
  std::vector<std::string> children;
  for (const ResponseMatch& c : m.children) children.push_back(Describe(c));
  const std::string joined = absl::StrJoin(children, ", ");
  switch (m.kind) {
    case ResponseMatch::Kind::kAll:
      return absl::StrCat("all(", joined, ")");
    case ResponseMatch::Kind::kAny:
      return absl::StrCat("any(", joined, ")");
    case ResponseMatch::Kind::kNot:
      return absl::StrCat("not(", joined, ")");
    case ResponseMatch::Kind::kStatus:
      return absl::StrCat("status(", m.min, "..", m.max, ")");
  }
  return "?";
}

inline std::string Describe(const Route& r) {
  std::vector<std::string> classes;
  for (const ResponseClass& c : r.response_classes) {
    classes.push_back(absl::StrCat(Describe(c.condition),
                                   c.is_failure ? "=failure" : "=success"));
  }
  return absl::StrCat(
      "name=", r.name, " when=", Describe(r.condition), " classes=[",
      absl::StrJoin(classes, ", "), "] labels={",
      absl::StrJoin(r.metrics_labels, ",", absl::PairFormatter("=")),
      "} retryable=", r.is_retryable,
      " timeout=", absl::FormatDuration(r.timeout));
}

inline std::vector<std::string> Describe(const std::vector<Route>& routes) {
  std::vector<std::string> out;
  for (const Route& r : routes) out.push_back(Describe(r));
  return out;
}

inline std::vector<std::string> Describe(
    const std::vector<WeightedBackend>& backends) {
  std::vector<std::string> out;
  for (const WeightedBackend& b : backends) {
    out.push_back(absl::StrCat(b.authority, "*", b.weight));
  }
  return out;
}

inline ::io::linkerd::proxy::destination::RequestMatch PathIs(
    const std::string& regex) {
  ::io::linkerd::proxy::destination::RequestMatch m;
  m.mutable_path()->set_regex(regex);
  return m;
}

inline ::io::linkerd::proxy::destination::RequestMatch MethodIs(
    ::io::linkerd::proxy::http_types::HttpMethod::Registered method) {
  ::io::linkerd::proxy::destination::RequestMatch m;
  m.mutable_method()->set_registered(method);
  return m;
}

inline ::io::linkerd::proxy::destination::ResponseMatch StatusIn(uint32_t min,
                                                                 uint32_t max) {
  ::io::linkerd::proxy::destination::ResponseMatch m;
  m.mutable_status()->set_min(min);
  m.mutable_status()->set_max(max);
  return m;
}

// A route that converts: path match, `route` label.
inline ::io::linkerd::proxy::destination::Route GoodRoute(
    const std::string& name, const std::string& regex) {
  ::io::linkerd::proxy::destination::Route r;
  *r.mutable_condition() = PathIs(regex);
  (*r.mutable_metrics_labels())["route"] = name;
  return r;
}

// What GoodRoute converts to.
inline Route WantRoute(const std::string& name, const std::string& regex) {
  Route r;
  r.name = name;
  r.condition = RequestMatch::Path(regex);
  r.metrics_labels = {{"route", name}};
  return r;
}

inline ::io::linkerd::proxy::destination::DestinationProfile OneRoute(
    ::io::linkerd::proxy::destination::Route route) {
  ::io::linkerd::proxy::destination::DestinationProfile p;
  *p.add_routes() = std::move(route);
  return p;
}

}  // namespace testing_util
}  // namespace mesh

#endif  // MESH_TESTS_UNIT_LINKERD_CONVERT_TEST_UTIL_H_
