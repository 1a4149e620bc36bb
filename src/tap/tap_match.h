// CompiledTapMatch: a TapMatch tree (include/mesh/tap.h) checked once and
// flattened for evaluation on each request head, as linkerd2-proxy's tap
// does with an ObserveRequest.Match.
//
// Compiling validates the tree (the rules ValidateTapOptions documents) and
// pre-parses what a request would otherwise parse every time: CIDRs become
// masked address bytes, port ranges get their 0 bound filled in. Evaluation
// reads the endpoint's address only if the tree has a destination net or
// port leaf, and parses it at most once per request however many matches
// read it (TapMatchInput caches it).
//
//   absl::StatusOr<CompiledTapMatch> m =
//       CompiledTapMatch::Compile(TapMatch::PathPrefix("/books."));
//   TapRequestHead head{"POST", "http", "books:7001", path, &endpoint,
//   nullptr}; bool tapped = m.ok() && m->Matches(head);
//
// CompiledTapMatch is immutable; safe to share. TapMatchInput is
// thread-compatible (one per request).
#ifndef MESH_SRC_TAP_TAP_MATCH_H_
#define MESH_SRC_TAP_TAP_MATCH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/endpoint.h"
#include "mesh/tap.h"
#include "src/model/address.h"

namespace mesh::internal {

// What a match sees of one request. The views and pointers must stay valid
// while the head is evaluated; `endpoint` and `route_labels` may be null
// (then destination and route leaves do not match).
struct TapRequestHead {
  absl::string_view method;
  absl::string_view scheme;
  absl::string_view authority;
  absl::string_view path;  // may carry a query, which matches ignore
  const Endpoint* endpoint = nullptr;
  const std::map<std::string, std::string>* route_labels = nullptr;
  uint32_t attempt = 1;  // as TransportRequest::attempt and hedge
  bool hedge = false;
};

// One request head plus what evaluation derives from it once: the path
// without its query, and the endpoint's parsed address (on first need).
class TapMatchInput {
 public:
  explicit TapMatchInput(const TapRequestHead& head);
  TapMatchInput(const TapMatchInput&) = delete;
  TapMatchInput& operator=(const TapMatchInput&) = delete;

  const TapRequestHead& head() const { return head_; }
  absl::string_view path_without_query() const { return path_; }
  // The endpoint's address ("a.b.c.d:port" or "[v6]:port"), parsed on the
  // first call (SocketAddress::Parse, as ValidateEndpoint does); null when
  // there is no endpoint or its address does not parse.
  const SocketAddress* Destination();

 private:
  const TapRequestHead& head_;
  absl::string_view path_;
  enum class Parse : uint8_t { kNotYet, kOk, kFailed };
  Parse parsed_ = Parse::kNotYet;
  SocketAddress destination_;
};

// Counts the nodes and string bytes of one match against kTapMaxMatchNodes
// and kTapMaxMatchBytes (include/mesh/tap.h) as it is read, so that a
// reader (CompiledTapMatch::Compile, the Observe request's conversion)
// stops at the first node past a bound instead of building it all.
class TapMatchBudget {
 public:
  // Counts one node at `part` ("match.any[256]") holding `string_bytes`
  // bytes of strings: OK, or INVALID_ARGUMENT naming the part and the bound
  // it passes with its value.
  absl::Status Take(absl::string_view part, size_t string_bytes);
  uint32_t nodes() const { return nodes_; }

 private:
  uint32_t nodes_ = 0;
  size_t bytes_ = 0;
};

class CompiledTapMatch {
 public:
  // Trees deeper than this are refused (they would only come from a
  // hostile or broken client; evaluation recurses).
  static constexpr int kMaxDepth = 32;

  // The compiled tree, or INVALID_ARGUMENT naming the part, e.g.
  // "match.all[1].not: needs exactly one condition (has 2)", or the bound
  // it passes (kMaxDepth, kTapMaxMatchNodes, kTapMaxMatchBytes). `where` is
  // the name of the root in messages.
  static absl::StatusOr<CompiledTapMatch> Compile(
      const TapMatch& match, absl::string_view where = "match");

  // True if the request head satisfies the tree. `all []` is true, `any []`
  // false; source leaves never match (the hook does not see the source).
  bool Matches(TapMatchInput& input) const;
  bool Matches(const TapRequestHead& head) const;

  // Nodes of the tree (conditions and all/any/not): what evaluating it may
  // cost a request, at most kTapMaxMatchNodes.
  uint32_t node_count() const { return static_cast<uint32_t>(nodes_.size()); }

 private:
  struct Node {
    TapMatch::Kind kind = TapMatch::Kind::kAll;
    uint32_t end = 0;  // one past the last node of this node's subtree
    std::string value;
    std::string key;
    uint32_t port_min = 0;
    uint32_t port_max = 0;
    IpAddress net;  // destination net, masked to its prefix
    int prefix = 0;
  };

  CompiledTapMatch() = default;
  absl::Status Add(const TapMatch& match, const std::string& where, int depth,
                   TapMatchBudget& budget);
  bool Eval(uint32_t i, TapMatchInput& input) const;

  std::vector<Node> nodes_;  // pre-order; nodes_[0] is the root
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_TAP_MATCH_H_
