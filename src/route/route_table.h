// RouteTable: a destination's routes compiled for matching on the data path.
//
// Built once per ServiceConfig on the control path (regexes compiled with
// RE2, so matching is linear in the input whatever the pattern), then shared
// immutably. Routes are tried in order; the first whose condition matches
// wins; with none, the implicit default route (no timeout, no retries, the
// default failure classes) applies.
//
//   std::vector<std::string> dropped;
//   auto table = RouteTable::Build(config, &dropped);
//   const CompiledRoute& route = table->Match({"POST",
//   "/books.Library/GetBook", &headers});
//
// Immutable after Build; safe to share.
#ifndef MESH_SRC_ROUTE_ROUTE_TABLE_H_
#define MESH_SRC_ROUTE_ROUTE_TABLE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "mesh/service_config.h"
#include "src/base/internal_export.h"
#include "src/route/traffic_split.h"

namespace re2 {
class RE2;
}

namespace mesh::internal {

// The request head a route matches on. `path` may carry a query ("?…"),
// which matching ignores. Header names are lower case.
struct RequestHead {
  absl::string_view method;
  absl::string_view path;
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
};

struct CompiledRoute {
  std::string name;  // "" for the default route
  bool is_default = false;
  // The default route of a config that requires a match
  // (ServiceConfig::require_route_match): calls that take it fail.
  bool unmatched_fails = false;
  absl::StatusCode unmatched_code = absl::StatusCode::kUnavailable;
  // Position among the kept routes; the default route's is size().
  size_t index = 0;
  absl::Duration timeout = absl::InfiniteDuration();
  // Route::response_timeout and idle_timeout (infinite: none).
  absl::Duration response_timeout = absl::InfiniteDuration();
  absl::Duration idle_timeout = absl::InfiniteDuration();
  bool is_retryable = false;
  bool allow_l5d_request_headers = false;
  RetryPolicy retry_policy;
  // Route::hedge_policy, valid (else none).
  std::optional<HedgePolicy> hedge;
  std::vector<ResponseClass> response_classes;
  std::map<std::string, std::string> metrics_labels;
  // The "route" label of its metrics: the name, else metrics_labels'
  // "route", else "#<index>"; "[default]" for the default route.
  std::string metrics_name;
  // metrics_labels plus "route" = metrics_name: what the tap hook reports.
  std::map<std::string, std::string> labels;
  // The route's own backends (Route::backends); null: the config's split.
  std::shared_ptr<const TrafficSplit> split;
  // The route's hash policies, their regexes compiled (null: no rewrite).
  struct HashPolicy {
    RequestHashPolicy policy;
    std::shared_ptr<const re2::RE2> regex;
  };
  std::vector<HashPolicy> hash_policies;
  // Delays and aborts on purpose; `has_fault` false: none (the common case
  // costs one branch).
  bool has_fault = false;
  FaultInjection fault;
  // Route::request_headers and response_headers, valid (else empty).
  HeaderModifier request_headers;
  HeaderModifier response_headers;
};

// `headers` changed as `modifier` says (add, set, remove).
void ApplyHeaderModifier(const HeaderModifier& modifier, Metadata* headers);
// OK, or INVALID_ARGUMENT naming the bad name or value.
absl::Status ValidateHeaderModifier(const HeaderModifier& modifier);

class MESH_INTERNAL_EXPORT RouteTable {
 public:
  // Compiles `config.routes`. A route whose condition does not compile (a
  // regex RE2 rejects or whose program exceeds 1 MiB, `not` without exactly
  // one child) or passes one of `limits` is left out and a line naming it
  // (and the limit) is added to `dropped` (may be null); the other routes
  // keep their order. An invalid retry policy or response class (a status
  // bound outside 100..999, `not` without one child) is dropped from its
  // route, with a line, and the route kept. A route's compiling stops at
  // its first condition past a limit; routes past max_routes are not looked
  // at; once one route's regexes pass the table's budget, later routes get
  // no regex compiled (those with regexes are dropped). So a hostile config
  // costs no more to build than the limits allow to keep.
  static std::shared_ptr<const RouteTable> Build(
      const ServiceConfig& config, const RouteLimits& limits,
      std::vector<std::string>* dropped);
  // With the default RouteLimits.
  static std::shared_ptr<const RouteTable> Build(
      const ServiceConfig& config, std::vector<std::string>* dropped) {
    return Build(config, RouteLimits(), dropped);
  }

  // The first route whose condition matches `head`, else the default route.
  const CompiledRoute& Match(const RequestHead& head) const;

  // Routes kept (the default route not counted).
  size_t size() const;
  // The route at `index` (CompiledRoute::index); size() is the default.
  const CompiledRoute& At(size_t index) const;

  ~RouteTable();
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

 private:
  struct Node;
  struct Entry;
  RouteTable();
  static bool Matches(const Node& node, const RequestHead& head,
                      absl::string_view path_without_query);
  static bool HeaderValueMatches(const Node& node, absl::string_view value);
  // Whether a parameter of `query` ("?…" or empty) matches `node`.
  static bool QueryParamMatches(const Node& node, absl::string_view query);

  // Fills exact_index_ and scan_ once the routes are in, when enough of
  // them are an exact, case-sensitive path alone (a gRPC method's route).
  void BuildExactIndex();
  // The exact path a route's condition is, alone, or null.
  static const std::string* ExactPathOf(const Node& node);

  std::vector<Entry> routes_;
  CompiledRoute default_route_;
  // Match's shortcut: the first route of each exact path, and the routes in
  // order that are not such (all of them, and no index, with few).
  absl::flat_hash_map<std::string, uint32_t> exact_index_;
  std::vector<uint32_t> scan_;
  bool indexed_ = false;
};

// The one string a path regex matches under RE2's FullMatch when it is a
// literal: plain characters and escaped punctuation ("/books\\.Library/Get",
// as RouteBuilder::GrpcMethod and Linkerd's generated profiles write it),
// with at most a leading '^' and a trailing '$'. nullopt for anything else
// (a class, a repetition, an alternation, an escape such as \\d). The route
// table matches such a route by comparing the path, not by running RE2.
std::optional<std::string> PathRegexLiteral(absl::string_view pattern);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_ROUTE_TABLE_H_
