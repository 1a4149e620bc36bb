// The value side of include/mesh/tap.h: TapMatch factories and
// ValidateTapOptions (which compiles the match to check it).
#include <utility>

#include "mesh/tap.h"
#include "src/tap/tap_match.h"

namespace mesh {
namespace {

TapMatch Leaf(TapMatch::Kind kind, std::string value, std::string key = {}) {
  TapMatch m;
  m.kind = kind;
  m.value = std::move(value);
  m.key = std::move(key);
  return m;
}

TapMatch Ports(TapMatch::Kind kind, uint32_t min, uint32_t max) {
  TapMatch m;
  m.kind = kind;
  m.port_min = min;
  m.port_max = max;
  return m;
}

TapMatch Tree(TapMatch::Kind kind, std::vector<TapMatch> children) {
  TapMatch m;
  m.kind = kind;
  m.children = std::move(children);
  return m;
}

}  // namespace

TapMatch TapMatch::All(std::vector<TapMatch> children) {
  return Tree(Kind::kAll, std::move(children));
}
TapMatch TapMatch::Any(std::vector<TapMatch> children) {
  return Tree(Kind::kAny, std::move(children));
}
TapMatch TapMatch::Not(TapMatch child) {
  std::vector<TapMatch> children;
  children.push_back(std::move(child));
  return Tree(Kind::kNot, std::move(children));
}
TapMatch TapMatch::SourceNet(std::string cidr) {
  return Leaf(Kind::kSourceNet, std::move(cidr));
}
TapMatch TapMatch::SourcePorts(uint32_t min, uint32_t max) {
  return Ports(Kind::kSourcePorts, min, max);
}
TapMatch TapMatch::DestinationNet(std::string cidr) {
  return Leaf(Kind::kDestinationNet, std::move(cidr));
}
TapMatch TapMatch::DestinationPorts(uint32_t min, uint32_t max) {
  return Ports(Kind::kDestinationPorts, min, max);
}
TapMatch TapMatch::DestinationLabel(std::string key, std::string value) {
  return Leaf(Kind::kDestinationLabel, std::move(value), std::move(key));
}
TapMatch TapMatch::RouteLabel(std::string key, std::string value) {
  return Leaf(Kind::kRouteLabel, std::move(value), std::move(key));
}
TapMatch TapMatch::Scheme(std::string scheme) {
  return Leaf(Kind::kScheme, std::move(scheme));
}
TapMatch TapMatch::AuthorityExact(std::string authority) {
  return Leaf(Kind::kAuthorityExact, std::move(authority));
}
TapMatch TapMatch::AuthorityPrefix(std::string prefix) {
  return Leaf(Kind::kAuthorityPrefix, std::move(prefix));
}
TapMatch TapMatch::Method(std::string method) {
  return Leaf(Kind::kMethod, std::move(method));
}
TapMatch TapMatch::PathExact(std::string path) {
  return Leaf(Kind::kPathExact, std::move(path));
}
TapMatch TapMatch::PathPrefix(std::string prefix) {
  return Leaf(Kind::kPathPrefix, std::move(prefix));
}

absl::Status ValidateTapOptions(const TapOptions& options) {
  if (options.limit == 0) {
    return absl::InvalidArgumentError("limit: must be > 0");
  }
  if (options.buffer == 0) {
    return absl::InvalidArgumentError("buffer: must be > 0");
  }
  return internal::CompiledTapMatch::Compile(options.match).status();
}

}  // namespace mesh
