// ServiceConfig: what a control plane (Linkerd service profiles, xDS routes)
// or code says about calls to one destination — its routes in order, each
// with a request match, response classes, retryability, timeout and metric
// labels; the retry budget; a weighted traffic split; a direct endpoint.
//
// Plain values: the route engine compiles them into an immutable table.
//
//   mesh::Route get_book;
//   get_book.name = "GetBook";
//   get_book.condition = mesh::RequestMatch::Path("^/books.Library/GetBook$");
//   get_book.timeout = absl::Milliseconds(300);
//   get_book.is_retryable = true;
//   mesh::ServiceConfig config;
//   config.routes.push_back(get_book);
//
// Thread-compatible.
#ifndef MESH_SERVICE_CONFIG_H_
#define MESH_SERVICE_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/endpoint.h"
#include "mesh/export.h"
#include "mesh/metadata.h"

namespace mesh {

// A header condition (xDS and code; Linkerd profiles have none). A header
// sent several times matches if one of its values does.
struct MESH_EXPORT HeaderMatch {
  enum class Kind {
    kExact,
    kPrefix,
    kRegex,
    kPresent,
    kSuffix,
    kContains,
    kRange,  // the value is a decimal integer in [range_start, range_end)
  };
  std::string name;  // lower case
  Kind kind = Kind::kExact;
  std::string value;  // unused for kPresent and kRange; RE2 full match: kRegex
  // kExact, kPrefix, kSuffix, kContains: compare without regard to ASCII case.
  bool ignore_case = false;
  int64_t range_start = 0;  // kRange
  int64_t range_end = 0;    // kRange
};

// A tree over the request head. `all []` is true, `any []` is false.
struct MESH_EXPORT RequestMatch {
  enum class Kind {
    kAll,
    kAny,
    kNot,
    kPath,
    kMethod,
    kHeader,
    kPathPrefix,
    kPathExact,
    kFraction,
    kQueryParam,
  };

  static RequestMatch All(std::vector<RequestMatch> children);
  static RequestMatch Any(std::vector<RequestMatch> children);
  static RequestMatch Not(RequestMatch child);
  // RE2 full match (anchored at both ends) on the path without its query.
  static RequestMatch Path(std::string regex);
  // "GET", "POST", … or any other method name; matched exactly.
  static RequestMatch Method(std::string method);
  static RequestMatch Header(HeaderMatch header);
  // The path without its query starts with `prefix` / is `path` (xDS
  // `prefix` and `path`); case_sensitive false compares ASCII letters
  // without regard to case.
  static RequestMatch PathPrefix(std::string prefix,
                                 bool case_sensitive = true);
  static RequestMatch PathExact(std::string path, bool case_sensitive = true);
  // True for a random share of calls, drawn per call: `per_million`
  // millionths (xDS runtime_fraction); 1,000,000 or more is always.
  static RequestMatch Fraction(uint32_t per_million);
  // A parameter of the path's query ("?a=1&b=2"; HTTPRoute queryParams):
  // `param.name` is compared exactly with each parameter's name, and the
  // condition holds if one occurrence's value matches `param` as a header
  // value would (kPresent: the name occurs). Names and values are compared
  // decoded ("%2F" is "/", "+" is a space).
  static RequestMatch QueryParam(HeaderMatch param);

  Kind kind = Kind::kAll;
  std::vector<RequestMatch> children;  // kAll, kAny; kNot has exactly one
  std::string path_regex;              // kPath
  std::string method;                  // kMethod
  HeaderMatch header;                  // kHeader; kQueryParam: the param
  std::string path;                    // kPathPrefix, kPathExact
  bool case_sensitive = true;          // kPathPrefix, kPathExact
  uint32_t per_million = 0;            // kFraction
};

// A tree over the response status. `all []` is true, `any []` is false.
struct MESH_EXPORT ResponseMatch {
  enum class Kind { kAll, kAny, kNot, kStatus };

  static ResponseMatch All(std::vector<ResponseMatch> children);
  static ResponseMatch Any(std::vector<ResponseMatch> children);
  static ResponseMatch Not(ResponseMatch child);
  // HTTP status in [min, max]; both within 100..999.
  static ResponseMatch Status(uint32_t min, uint32_t max);

  Kind kind = Kind::kAll;
  std::vector<ResponseMatch> children;
  uint32_t min = 0;  // kStatus
  uint32_t max = 0;  // kStatus
};

// The first class whose condition matches decides whether a response is a
// failure; with none matching, the default classification applies (gRPC
// status in {DataLoss, DeadlineExceeded, Internal, PermissionDenied,
// Unavailable, Unknown}, or HTTP 5xx).
struct MESH_EXPORT ResponseClass {
  ResponseMatch condition;
  bool is_failure = false;
};

// HTTP statuses from `min` to `max`, both included.
struct MESH_EXPORT HttpStatusRange {
  uint32_t min = 0;
  uint32_t max = 0;
};

// Beyond Linkerd (the semantics of xDS RetryPolicy): how many attempts a
// retryable route makes and how long it waits between them. Every retry is
// still bounded by the route's timeout and the destination's retry budget.
struct MESH_EXPORT RetryPolicy {
  // Attempts in all, the first included; 0: no limit but the budget and the
  // deadline (Linkerd's behaviour). 1: never retry.
  uint32_t max_attempts = 0;
  // Before retry n (n = 1, 2, ...) the call waits a random time in
  // [0, min(backoff_base × 2^(n-1), backoff_max)] ("full jitter"). Zero base:
  // retry at once (Linkerd's behaviour). Zero max: 10 × base (xDS default).
  absl::Duration backoff_base = absl::ZeroDuration();
  absl::Duration backoff_max = absl::ZeroDuration();
  // If not empty, exactly the attempts that end with one of these codes are
  // retried (xDS `retry_on`), whatever the response classes say; CANCELLED
  // and DEADLINE_EXCEEDED here mean the server's, never the caller's own.
  // Empty: the attempts the response classes call failures.
  std::vector<absl::StatusCode> retry_on;
  // If not empty (and `retry_on` is), exactly these attempts are retried
  // (HTTPRoute's retry conditions): those answered with an HTTP status in
  // one of the ranges (each within 100..999), and those that never reached
  // a server (the connection could not be made). A gRPC call's answer is
  // HTTP 200 whatever its gRPC status, so it is not retried.
  std::vector<HttpStatusRange> retry_on_http_status;
  // Each attempt's own time limit, within the call's deadline (Linkerd's
  // retry timeout, xDS's per_try_timeout): an attempt still unanswered when
  // it passes is cancelled (the server sees the cancellation) and, on a
  // retryable route, retried under the budget whatever `retry_on` says;
  // otherwise the call ends DEADLINE_EXCEEDED naming it. Unary calls only
  // (a stream's attempts are bounded by the call's deadline). Infinite:
  // none. Must be > 0.
  absl::Duration per_try_timeout = absl::InfiniteDuration();
  // A request body larger than this is not kept for another attempt, so
  // never retried (Linkerd's max_request_bytes). 0: 64 KiB.
  uint32_t max_request_bytes = 0;
};

// Hedging (gRFC A6): when a request is sometimes slow wherever it goes, the
// same request is sent again, after `delay`, to an endpoint not yet tried,
// up to max_attempts in all; the first answer that is OK (or not a
// non-fatal failure) is the call's, and the other attempts are cancelled
// (their servers see the cancellation). Every hedge is a withdrawal from
// the destination's retry budget: with the budget empty none is sent. A
// server's grpc-retry-pushback-ms delays the next hedge by its value, or
// (negative, or not a number) stops hedging. Each attempt after the first
// carries grpc-previous-rpc-attempts in the request mesh builds (gRPC
// 1.51's transport does not send it on). Unary calls only, and only with a
// request no larger than RetryPolicy::max_request_bytes (else sent once); a
// route hedges or retries, not both (a hedged route must not be retryable).
struct MESH_EXPORT HedgePolicy {
  // Attempts in all, the first included: 2..5.
  uint32_t max_attempts = 2;
  // Between one attempt and the next, while no answer has come: finite and
  // >= 0; zero sends all of them at once.
  absl::Duration delay = absl::ZeroDuration();
  // An attempt ending with one of these codes sends the next hedge at once
  // (if attempts are left); with any other code (or OK), the call ends with
  // that answer. Not OK.
  std::vector<absl::StatusCode> non_fatal_codes;
};

// Beyond Linkerd (xDS's fault filter): calls of a route delayed or failed on
// purpose, to test how callers cope. A delay comes first, then the abort.
struct MESH_EXPORT FaultInjection {
  // Share of calls delayed, in millionths, and by how long.
  uint32_t delay_per_million = 0;
  absl::Duration delay = absl::ZeroDuration();
  // Share of calls failed at once, in millionths, with this status (the
  // call never leaves the process). A code of OK: no abort.
  uint32_t abort_per_million = 0;
  absl::StatusCode abort_code = absl::StatusCode::kOk;
  std::string abort_message;
  // Delay or abort as the request asks, when it carries the headers
  // x-envoy-fault-delay-request (milliseconds) or
  // x-envoy-fault-abort-grpc-request (a gRPC code), each with an optional
  // -percentage header: a count of *_header_unit millionths (the configured
  // share's denominator: 10,000 for a percent, 100 for a ten-thousandth, 1
  // for a millionth, as Envoy reads it), capped by the share above.
  bool delay_from_header = false;
  bool abort_from_header = false;
  uint32_t delay_header_unit = 10'000;
  uint32_t abort_header_unit = 10'000;
  // Faults (delays waiting, aborts) of the destination in progress at once;
  // past it, calls are left alone. 0: no limit.
  uint32_t max_active_faults = 0;
};

// Beyond Linkerd (xDS hash_policy): what a call is hashed by when its
// backend balances by ring hash (BackendPolicy::Balancing::kRingHash).
// A route's policies apply in order: each that yields a value is mixed into
// the hash, and a terminal one that yields stops there. A call none yields
// for gets a random hash.
struct MESH_EXPORT RequestHashPolicy {
  enum class Kind {
    kHeader,   // the header's value (values joined by ","), if sent
    kChannel,  // the channel: every call of one channel hashes alike
  };
  Kind kind = Kind::kHeader;
  std::string header;  // kHeader; lower case
  // kHeader: if set, the value is rewritten first, each match of this RE2
  // pattern replaced by `substitution` (\1 … for groups).
  std::string regex;
  std::string substitution;
  bool terminal = false;
};

// Headers changed on their way (HTTPRoute's and GRPCRoute's header modifier
// filters): `add` appends each pair, then `set` replaces every value of each
// name with its own, then `remove` drops each name. Names are gRPC metadata
// names (lower case; none that gRPC or HTTP/2 reserve), values printable.
struct MESH_EXPORT HeaderModifier {
  Metadata add;
  Metadata set;
  std::vector<std::string> remove;
  bool empty() const { return add.empty() && set.empty() && remove.empty(); }
};

// One backend of a traffic split: its own destination ("name:port"), or a
// cluster of the destination's discovery source (xDS clusters).
struct MESH_EXPORT WeightedBackend {
  WeightedBackend() = default;
  WeightedBackend(std::string authority, uint32_t weight)
      : authority(std::move(authority)), weight(weight) {}
  // A backend that is the source's cluster `name`.
  static WeightedBackend Cluster(std::string name, uint32_t weight) {
    WeightedBackend b;
    b.cluster = std::move(name);
    b.weight = weight;
    return b;
  }

  std::string authority;
  uint32_t weight = 0;  // relative; Linkerd's are ten-thousandths
  // In place of `authority`: the source's cluster of this name (xDS
  // clusters; the built-in xDS source serves them, an application's own
  // source has none). Its calls carry the channel's own authority.
  std::string cluster;
  // Filters of the attempts sent to this backend (Linkerd's backend
  // filters), closer to it than the route's: its request modifier applies
  // after the route's, its response modifier before the route's; and
  // abort_per_million millionths of its attempts fail at once with
  // abort_code and abort_message (OK: none), reaching no endpoint and not
  // retried. A backend named twice in a split keeps its first filters.
  HeaderModifier request_headers;
  HeaderModifier response_headers;
  uint32_t abort_per_million = 0;
  absl::StatusCode abort_code = absl::StatusCode::kOk;
  std::string abort_message;
};

struct MESH_EXPORT Route {
  // The route's name in metrics ("route" label); empty: from metrics_labels.
  std::string name;
  RequestMatch condition;
  std::vector<ResponseClass> response_classes;
  std::map<std::string, std::string> metrics_labels;
  bool is_retryable = false;
  // Attempts and backoff of a retryable route.
  RetryPolicy retry_policy;
  // Hedged attempts (see HedgePolicy), in place of retries: a route with
  // one must not be retryable. A per-try timeout in retry_policy does not
  // cancel a hedged route's attempts: shorter than the policy's delay, it
  // is the delay. Default: none.
  std::optional<HedgePolicy> hedge_policy;
  // Bounds the whole call including retries. Infinite: none.
  absl::Duration timeout = absl::InfiniteDuration();
  // Each attempt's time limit, never retried (Linkerd's response timeout;
  // RetryPolicy::per_try_timeout is the retried one): an attempt still
  // unanswered when it passes is cancelled (the server sees the
  // cancellation) and the call ends DEADLINE_EXCEEDED naming it. A stream's
  // attempt is bounded so as a whole. Infinite: none; must be > 0.
  absl::Duration response_timeout = absl::InfiniteDuration();
  // The longest a call may go with nothing sent or received (Linkerd's idle
  // timeout); past it the call is cancelled and ends DEADLINE_EXCEEDED
  // naming it, never retried. A unary call is idle from its request to its
  // response; a stream from its last message either way (or its headers).
  // Infinite: none; must be > 0.
  absl::Duration idle_timeout = absl::InfiniteDuration();
  // Linkerd's per-request policy (a policy rule's allow_l5d_request_headers;
  // for trusted callers only): a call's l5d-retry-http, l5d-retry-grpc,
  // l5d-retry-limit, l5d-retry-timeout, l5d-timeout and l5d-response-timeout
  // headers set or override this route's retries and timeouts for that call
  // and are not sent on; a value that does not parse is ignored with a log
  // line.
  bool allow_l5d_request_headers = false;
  // Where this route's calls go (xDS clusters and weighted clusters). Empty:
  // the config's split (ServiceConfig::backends), else the destination.
  std::vector<WeightedBackend> backends;
  // True: each call goes to the first of `backends`, in order, that has
  // endpoints, whatever the weights (HTTPRoute's first_available). False:
  // a draw by weight.
  bool backends_first_available = false;
  // Delays and aborts on purpose. Default: none.
  FaultInjection fault;
  // What a call is hashed by for ring-hash backends. Empty: a random hash.
  std::vector<RequestHashPolicy> hash_policies;
  // The metadata of each attempt's request, and of the response's headers
  // (not a stream's) as the caller gets them, changed so. Default: as sent.
  HeaderModifier request_headers;
  HeaderModifier response_headers;
};

// Builds a Route in one expression. Conditions given one after another must
// all hold; with none, the route matches every request.
//
//   config.routes.push_back(mesh::RouteBuilder("GetBook")
//                               .GrpcMethod("books.Library", "GetBook")
//                               .Timeout(absl::Milliseconds(300))
//                               .Retryable()
//                               .Build());
//
// Thread-compatible.
class MESH_EXPORT RouteBuilder {
 public:
  explicit RouteBuilder(std::string name);
  // Path regex (RE2 full match, query excluded).
  RouteBuilder& Path(std::string regex);
  // Exactly the gRPC method /service/method (regex metacharacters escaped).
  RouteBuilder& GrpcMethod(const std::string& service,
                           const std::string& method);
  RouteBuilder& HttpMethod(std::string method);
  RouteBuilder& Header(HeaderMatch header);
  // Any condition tree.
  RouteBuilder& When(RequestMatch condition);
  RouteBuilder& Timeout(absl::Duration timeout);
  RouteBuilder& Retryable(RetryPolicy policy = {});
  RouteBuilder& Hedged(HedgePolicy policy);
  // Appends a response class: responses matching `condition` are failures
  // (or successes) whatever their gRPC status.
  RouteBuilder& Classify(ResponseMatch condition, bool is_failure);
  RouteBuilder& Label(std::string key, std::string value);
  Route Build() const;

 private:
  Route route_;
  std::vector<RequestMatch> conditions_;
};

// Finagle/Linkerd retry budget: each request deposits 1, a retry withdraws
// 1/retry_ratio, and min_retries_per_second × ttl is always available.
struct MESH_EXPORT RetryBudget {
  double retry_ratio = 0.2;  // [0, 1000]
  uint32_t min_retries_per_second = 10;
  absl::Duration ttl = absl::Seconds(10);  // [1 s, 60 s]
};

// What one destination's route table may cost. Matching is per call, so a
// config (from a control plane or code) must not be able to make it
// arbitrarily slow: the piece that exceeds a limit is dropped with a log line
// naming the limit, as other invalid pieces are, and the rest of the config
// applies. The defaults are far above any real service profile.
struct MESH_EXPORT RouteLimits {
  // Routes per config, as given (dropped ones count too); later ones are
  // dropped.
  uint32_t max_routes = 1000;
  // Conditions (nodes of the RequestMatch tree, `all`/`any`/`not` included)
  // in one route; a route with more is dropped.
  uint32_t max_conditions_per_route = 100;
  // Nesting of one route's RequestMatch tree (a lone condition is depth 1);
  // a route nested deeper is dropped.
  uint32_t max_depth = 16;
  // Compiled size of all the table's regular expressions together (RE2's
  // program size, about one unit per instruction; "^/pkg.Svc/Method$" is
  // about 30). A route whose regexes would pass it is dropped.
  int64_t max_regex_program_size = 100'000;
};

struct MESH_EXPORT ServiceConfig {
  std::vector<Route> routes;  // in order; the first match wins
  std::optional<RetryBudget> retry_budget;
  // Traffic split; empty: the destination itself.
  std::vector<WeightedBackend> backends;
  std::string fully_qualified_name;
  bool opaque_protocol = false;
  // If set, calls go straight to this endpoint, without balancing.
  std::optional<Endpoint> endpoint;
  // A call that matches none of `routes` fails at once, UNAVAILABLE "no
  // matching route", instead of taking the default route to the
  // destination itself: xDS's rule (a request must match a route, as in
  // gRPC's and Envoy's clients). False for Linkerd profiles and code.
  bool require_route_match = false;
  // The code of that failure: UNAVAILABLE (xDS, as gRPC's clients), or
  // NOT_FOUND (Linkerd's policies, as its proxy answers a gRPC call).
  absl::StatusCode unmatched_route_code = absl::StatusCode::kUnavailable;
};

// What a discovery source emits service configs into. Calls for one
// subscription are serialized.
class MESH_EXPORT ServiceConfigObserver {
 public:
  virtual ~ServiceConfigObserver() = default;
  // A whole new config (it replaces the previous one).
  virtual void OnServiceConfig(const ServiceConfig& config) = 0;
  // The source could not get or convert a config; the last good one stays.
  virtual void OnServiceConfigError(const absl::Status& status) {
    (void)status;
  }
  // The target's config no longer exists, or never did (an xDS Listener
  // deleted or never sent): the last one is dropped. Where the source
  // requires routes, calls fail at once naming `why` until a config comes;
  // elsewhere they take the default route. By default, an error.
  virtual void OnServiceConfigRemoved(const absl::Status& why) {
    OnServiceConfigError(why);
  }
};

}  // namespace mesh

#endif  // MESH_SERVICE_CONFIG_H_
