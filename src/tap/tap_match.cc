#include "src/tap/tap_match.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mesh::internal {
namespace {

using Kind = TapMatch::Kind;

// The part names of error messages, after the wire's field names.
const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kAny:
      return "any";
    case Kind::kNot:
      return "not";
    case Kind::kSourceNet:
      return "source_net";
    case Kind::kSourcePorts:
      return "source_ports";
    case Kind::kDestinationNet:
      return "destination_net";
    case Kind::kDestinationPorts:
      return "destination_ports";
    case Kind::kDestinationLabel:
      return "destination_label";
    case Kind::kRouteLabel:
      return "route_label";
    case Kind::kScheme:
      return "scheme";
    case Kind::kAuthorityExact:
      return "authority_exact";
    case Kind::kAuthorityPrefix:
      return "authority_prefix";
    case Kind::kMethod:
      return "method";
    case Kind::kPathExact:
      return "path_exact";
    case Kind::kPathPrefix:
      return "path_prefix";
  }
  return "unknown";
}

// "a.b.c.d/n" or "v6/n"; a bare address is a /32 or /128. The address is
// masked to its prefix, so "10.1.2.3/8" is 10.0.0.0/8. An IPv4-mapped
// address ("::ffff:10.0.0.0/104") is an IPv6 net, as IpAddress keeps it.
bool ParseCidr(absl::string_view cidr, IpAddress* net, int* prefix,
               std::string* error) {
  size_t slash = cidr.find('/');
  absl::StatusOr<IpAddress> ip = IpAddress::Parse(cidr.substr(0, slash));
  if (!ip.ok()) {
    *error = absl::StrCat("'", cidr, "' is not a CIDR (a.b.c.d/n or v6/n)");
    return false;
  }
  int max = ip->bit_length();
  *prefix = max;
  if (slash != absl::string_view::npos &&
      (!absl::SimpleAtoi(cidr.substr(slash + 1), prefix) || *prefix < 0 ||
       *prefix > max)) {
    *error = absl::StrCat("prefix length of '", cidr, "' must be 0..", max);
    return false;
  }
  *net = ip->Masked(*prefix);
  return true;
}

// Linkerd's rule: a 0 bound copies the other (a single port); both 0, a
// bound past 65535 or min > max is invalid.
bool NormalizePorts(uint32_t* min, uint32_t* max, std::string* error) {
  if (*min == 0) *min = *max;
  if (*max == 0) *max = *min;
  if (*min == 0) {
    *error = "both bounds are 0";
  } else if (*max > 65535) {
    *error = absl::StrCat("port ", *max, " is above 65535");
  } else if (*min > *max) {
    *error = absl::StrCat("min ", *min, " is above max ", *max);
  } else {
    return true;
  }
  return false;
}

bool LabelIs(const std::map<std::string, std::string>* labels,
             const std::string& key, const std::string& value) {
  if (labels == nullptr) return false;
  auto it = labels->find(key);
  return it != labels->end() && it->second == value;
}

}  // namespace

TapMatchInput::TapMatchInput(const TapRequestHead& head)
    : head_(head), path_(head.path.substr(0, head.path.find('?'))) {}

const SocketAddress* TapMatchInput::Destination() {
  if (parsed_ == Parse::kNotYet) {
    parsed_ = Parse::kFailed;
    if (head_.endpoint != nullptr) {
      absl::StatusOr<SocketAddress> address =
          SocketAddress::Parse(head_.endpoint->address);
      if (address.ok()) {
        destination_ = *address;
        parsed_ = Parse::kOk;
      }
    }
  }
  return parsed_ == Parse::kOk ? &destination_ : nullptr;
}

absl::Status TapMatchBudget::Take(absl::string_view part, size_t string_bytes) {
  if (++nodes_ > kTapMaxMatchNodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        part, ": the match has more than ", kTapMaxMatchNodes,
        " nodes (conditions and all/any/not), the most one subscription may "
        "have (kTapMaxMatchNodes)"));
  }
  bytes_ += string_bytes;
  if (bytes_ > kTapMaxMatchBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        part, ": the match's strings pass ", kTapMaxMatchBytes,
        " bytes, the most one subscription may have (kTapMaxMatchBytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompiledTapMatch> CompiledTapMatch::Compile(
    const TapMatch& match, absl::string_view where) {
  CompiledTapMatch compiled;
  TapMatchBudget budget;
  absl::Status status = compiled.Add(match, std::string(where), 0, budget);
  if (!status.ok()) return status;
  return compiled;
}

absl::Status CompiledTapMatch::Add(const TapMatch& match,
                                   const std::string& where, int depth,
                                   TapMatchBudget& budget) {
  std::string part = absl::StrCat(where, ".", KindName(match.kind));
  if (depth >= kMaxDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(part, ": nested deeper than ", kMaxDepth));
  }
  if (absl::Status s = budget.Take(part, match.value.size() + match.key.size());
      !s.ok()) {
    return s;
  }
  size_t index = nodes_.size();
  nodes_.emplace_back();
  Node node;
  node.kind = match.kind;
  std::string error;
  switch (match.kind) {
    case Kind::kAll:
    case Kind::kAny:
      break;
    case Kind::kNot:
      if (match.children.size() != 1) {
        error = absl::StrCat("needs exactly one condition (has ",
                             match.children.size(), ")");
      }
      break;
    case Kind::kSourceNet:
    case Kind::kDestinationNet:
      ParseCidr(match.value, &node.net, &node.prefix, &error);
      break;
    case Kind::kSourcePorts:
    case Kind::kDestinationPorts:
      node.port_min = match.port_min;
      node.port_max = match.port_max;
      NormalizePorts(&node.port_min, &node.port_max, &error);
      break;
    case Kind::kDestinationLabel:
    case Kind::kRouteLabel:
      if (match.key.empty()) error = "empty label key";
      node.key = match.key;
      node.value = match.value;
      break;
    case Kind::kScheme:
    case Kind::kAuthorityExact:
    case Kind::kAuthorityPrefix:
    case Kind::kMethod:
    case Kind::kPathExact:
    case Kind::kPathPrefix:
      node.value = match.value;
      break;
    default:
      error = "unknown condition kind";
  }
  if (!error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(part, ": ", error));
  }
  if (match.kind == Kind::kAll || match.kind == Kind::kAny ||
      match.kind == Kind::kNot) {
    for (size_t i = 0; i < match.children.size(); ++i) {
      std::string child_where =
          match.kind == Kind::kNot ? part : absl::StrCat(part, "[", i, "]");
      absl::Status status =
          Add(match.children[i], child_where, depth + 1, budget);
      if (!status.ok()) return status;
    }
  }
  node.end = static_cast<uint32_t>(nodes_.size());
  nodes_[index] = std::move(node);
  return absl::OkStatus();
}

bool CompiledTapMatch::Matches(TapMatchInput& input) const {
  return Eval(0, input);
}

bool CompiledTapMatch::Matches(const TapRequestHead& head) const {
  TapMatchInput input(head);
  return Eval(0, input);
}

bool CompiledTapMatch::Eval(uint32_t i, TapMatchInput& input) const {
  const Node& n = nodes_[i];
  const TapRequestHead& head = input.head();
  switch (n.kind) {
    case Kind::kAll:
      for (uint32_t c = i + 1; c < n.end; c = nodes_[c].end) {
        if (!Eval(c, input)) return false;
      }
      return true;
    case Kind::kAny:
      for (uint32_t c = i + 1; c < n.end; c = nodes_[c].end) {
        if (Eval(c, input)) return true;
      }
      return false;
    case Kind::kNot:
      return !Eval(i + 1, input);
    case Kind::kSourceNet:
    case Kind::kSourcePorts:
      return false;
    case Kind::kDestinationNet: {
      const SocketAddress* destination = input.Destination();
      return destination != nullptr &&
             destination->ip().InNetwork(n.net, n.prefix);
    }
    case Kind::kDestinationPorts: {
      const SocketAddress* destination = input.Destination();
      return destination != nullptr && destination->port() >= n.port_min &&
             destination->port() <= n.port_max;
    }
    case Kind::kDestinationLabel:
      return head.endpoint != nullptr &&
             LabelIs(&head.endpoint->labels, n.key, n.value);
    case Kind::kRouteLabel:
      return LabelIs(head.route_labels, n.key, n.value);
    case Kind::kScheme:
      return head.scheme == n.value;
    case Kind::kAuthorityExact:
      return head.authority == n.value;
    case Kind::kAuthorityPrefix:
      return absl::StartsWith(head.authority, n.value);
    case Kind::kMethod:
      return head.method == n.value;
    case Kind::kPathExact:
      return input.path_without_query() == n.value;
    case Kind::kPathPrefix:
      return absl::StartsWith(input.path_without_query(), n.value);
  }
  return false;
}

}  // namespace mesh::internal
