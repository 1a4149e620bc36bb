// Linkerd's outbound policies end to end: a scripted policy controller
// (tests/support/policy_server.h) beside the real local control plane
// serving Destination.Get and GetProfile, real gRPC backends on 127.0.0.1,
// calls through a mesh::Channel. GRPCRoute matches, splits, timeouts,
// retries and filters steer the calls; updates are followed while calls
// flow; NotFound and Unimplemented fall back to the profile; a profile with
// a split of its own overrides the policy; a hostile controller changes
// nothing that worked.
#include <google/protobuf/text_format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/destination.grpc.pb.h"
#include "linkerd/outbound.pb.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tests/support/policy_server.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/tap_fixtures.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

namespace out = ::io::linkerd::proxy::outbound;
using controlplane::Config;
using controlplane::ControlPlane;
using controlplane::EndpointSpec;
using controlplane::PolicyFailureSpec;
using controlplane::PolicyMatchSpec;
using controlplane::PolicyRouteSpec;
using controlplane::PolicyRuleSpec;
using controlplane::PolicySpec;
using ::testing::HasSubstr;

constexpr char kTarget[] = "books.ns.svc.cluster.local:8080";
constexpr char kA[] = "books-a.ns.svc.cluster.local:8080";
constexpr char kB[] = "books-b.ns.svc.cluster.local:8080";
constexpr char kSay[] = "/test.Echo/Say";
constexpr char kOther[] = "/test.Echo/Other";

out::OutboundPolicy Parse(const std::string& text) {
  out::OutboundPolicy p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

// The controller's default queue.
constexpr char kDefaultQueue[] =
    "queue { capacity: 100 failfast_timeout { seconds: 3 } }";

// A Backend that balances the endpoints Destination.Get gives for `path`.
std::string BackendTo(const std::string& path,
                      const std::string& queue = kDefaultQueue) {
  return absl::StrCat("backend { metadata { default: '", path,
                      "' } balancer { discovery { dst { path: '", path,
                      "' } } peak_ewma { default_rtt { nanos: 30000000 } "
                      "decay { seconds: 10 } } } ",
                      queue, " }");
}

// A random_available distribution of (path, weight).
std::string Split(const std::vector<std::pair<std::string, int>>& to,
                  const std::string& queue = kDefaultQueue) {
  std::string text = "backends { random_available { ";
  for (const auto& [path, weight] : to) {
    absl::StrAppend(&text, "backends { weight: ", weight, " backend { ",
                    BackendTo(path, queue), " } } ");
  }
  return text + "} }";
}

// A random_available distribution of one `forward` backend to `address`
// ("127.0.0.1:port").
std::string ForwardTo(const std::string& address) {
  const std::string port = address.substr(address.rfind(':') + 1);
  return absl::StrCat(
      "backends { random_available { backends { weight: 1 backend { backend "
      "{ metadata { default: 'forward' } forward { addr { ip { ipv4: "
      "2130706433 } port: ",
      port, " } weight: 1 } ", kDefaultQueue, " } } } } }");
}

// A GRPCRoute rule: its matches, its distribution, then anything else.
std::string GrpcRule(const std::string& matches, const std::string& split,
                     const std::string& extra = "") {
  return absl::StrCat("rules { ", matches, " ", split, " ", extra, " }");
}

// `grpc_extra`: more of the Grpc protocol part (failure_accrual).
out::OutboundPolicy GrpcPolicy(const std::string& rules,
                               const std::string& grpc_extra = "") {
  return Parse(absl::StrCat(
      "metadata { resource { group: 'core' kind: 'Service' namespace: 'ns' "
      "name: 'books' port: 8080 } } protocol { grpc { routes { metadata { "
      "resource { group: 'gateway.networking.k8s.io' kind: 'GRPCRoute' "
      "namespace: 'ns' name: 'books-route' } } ",
      rules, " } ", grpc_extra, " } }"));
}

// Whether Describe() shows the endpoint `address` ejected (by any channel).
bool ShownEjected(const std::string& describe, const std::string& address) {
  size_t at = describe.find(absl::StrCat("\"address\":\"", address, "\""));
  if (at == std::string::npos) return false;
  size_t next = describe.find("\"address\":", at + 1);
  size_t ejected = describe.find("\"ejected\":true", at);
  return ejected != std::string::npos && ejected < next;
}

constexpr char kSayMatch[] =
    "matches { rpc { service: 'test.Echo' method: 'Say' } }";

class LinkerdPolicyTest : public ::testing::Test {
 protected:
  // StartMesh's policy address: the local control plane's own.
  static constexpr char kControlPlane[] = "control plane";

  void SetUp() override {
    backends_ = testing::StartBackends(3);  // 0: the target's, 1: a, 2: b
    config_.targets[kTarget].endpoints = {Endpoint(0)};
    config_.targets[kA].endpoints = {Endpoint(1)};
    config_.targets[kB].endpoints = {Endpoint(2)};
    policies_ = testing::PolicyServer::Start();
  }

  EndpointSpec Endpoint(int i) const {
    EndpointSpec e;
    e.address = backends_[i]->address();
    return e;
  }

  // The Mesh, watching policies at `policy_address` (the scripted
  // controller unless given).
  void StartMesh(std::string policy_address = "") {
    auto cp = ControlPlane::Start("127.0.0.1:0", config_);
    ASSERT_TRUE(cp.ok()) << cp.status();
    control_plane_ = *std::move(cp);
    LinkerdDiscoveryOptions o;
    o.address = absl::StrCat("127.0.0.1:", control_plane_->port());
    o.policy_address = policy_address.empty()            ? policies_->address()
                       : policy_address == kControlPlane ? o.address
                                                         : policy_address;
    o.source_workload = R"({"ns":"ns","pod":"web-0"})";
    o.backoff_min = absl::Milliseconds(20);
    o.backoff_max = absl::Milliseconds(200);
    auto discovery = NewLinkerdDiscovery(o);
    ASSERT_TRUE(discovery.ok()) << discovery.status();
    MeshOptions options;
    options.discovery = *discovery;
    options.tap_address = tap_address_;
    auto m = Mesh::Create(options);
    ASSERT_TRUE(m.ok()) << m.status();
    mesh_ = *std::move(m);
    auto c = mesh_->NewChannel(kTarget);
    ASSERT_TRUE(c.ok()) << c.status();
    channel_ = *std::move(c);
  }

  CallResult Call(const char* method = kSay, const std::string& body = "x") {
    CallOptions options;
    options.deadline = absl::Now() + absl::Seconds(5);
    return channel_->CallRaw(method, body, options);
  }

  // Calls `method` until `n` in a row end on backend `i` (10 s at most).
  bool SettlesOn(int i, const char* method = kSay, int n = 5) {
    int in_a_row = 0;
    return testing::WaitFor(
        [&] {
          CallResult r = Call(method);
          in_a_row = r.status.ok() && r.endpoint == backends_[i]->address()
                         ? in_a_row + 1
                         : 0;
          return in_a_row >= n;
        },
        absl::Seconds(10));
  }

  std::vector<std::unique_ptr<tools::EchoBackend>> backends_;
  Config config_;
  std::unique_ptr<testing::PolicyServer> policies_;
  std::unique_ptr<ControlPlane> control_plane_;
  std::string tap_address_;  // set before StartMesh to serve tap
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<mesh::Channel> channel_;
};

TEST_F(LinkerdPolicyTest, GrpcRouteMatchesSteerCallsAndUpdatesAreFollowed) {
  policies_->Set(kTarget, GrpcPolicy(GrpcRule(kSayMatch, Split({{kB, 1}})) +
                                     GrpcRule("", Split({{kA, 1}}))));
  StartMesh();
  ASSERT_TRUE(SettlesOn(2, kSay));    // Say → b
  ASSERT_TRUE(SettlesOn(1, kOther));  // anything else → a
  // The controller moves Say to a while calls flow.
  policies_->Set(kTarget, GrpcPolicy(GrpcRule(kSayMatch, Split({{kA, 1}})) +
                                     GrpcRule("", Split({{kB, 1}}))));
  EXPECT_TRUE(SettlesOn(1, kSay));
  EXPECT_TRUE(SettlesOn(2, kOther));
  EXPECT_EQ(backends_[0]->calls_received(), 0);  // the policy routes all
  EXPECT_EQ(policies_->watches(kTarget), 1);     // one stream did it all
  EXPECT_THAT(policies_->source_workloads(),
              ::testing::Each(R"({"ns":"ns","pod":"web-0"})"));
  std::string describe = mesh_->Describe();
  EXPECT_THAT(describe, HasSubstr("Linkerd OutboundPolicy"));
  EXPECT_THAT(describe, HasSubstr("Service ns/books"));
}

TEST_F(LinkerdPolicyTest, AWeightedSplitSharesCallsByWeight) {
  policies_->Set(kTarget, GrpcPolicy(GrpcRule("", Split({{kA, 3}, {kB, 1}}))));
  StartMesh();
  ASSERT_TRUE(
      testing::WaitFor([&] { return Call().status.ok(); }, absl::Seconds(10)));
  ASSERT_TRUE(testing::WaitFor(
      [&] {  // both backends' endpoints are known
        Call();
        return backends_[1]->calls_received() > 0 &&
               backends_[2]->calls_received() > 0;
      },
      absl::Seconds(10)));
  const int64_t a0 = backends_[1]->calls_received();
  const int64_t b0 = backends_[2]->calls_received();
  const int kCalls = 400;
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(Call().status.ok());
  const double b_share =
      static_cast<double>(backends_[2]->calls_received() - b0) / kCalls;
  // 25 % ± 6σ (σ = sqrt(0.25 × 0.75 / 400) ≈ 2.2 %).
  EXPECT_NEAR(b_share, 0.25, 0.13);
  EXPECT_EQ(
      backends_[1]->calls_received() - a0 + backends_[2]->calls_received() - b0,
      kCalls);
}

TEST_F(LinkerdPolicyTest, ARequestTimeoutAndAFailureInjector) {
  backends_[2]->set_delay(absl::Seconds(2));
  policies_->Set(
      kTarget,
      GrpcPolicy(GrpcRule(kSayMatch, Split({{kB, 1}}),
                          "timeouts { request { nanos: 200000000 } }") +
                 GrpcRule("matches { rpc { method: 'Chaos' } }",
                          Split({{kA, 1}}),
                          "filters { failure_injector { code: 14 message: "
                          "'chaos monkey' } }") +
                 GrpcRule("", Split({{kA, 1}}))));
  StartMesh();
  ASSERT_TRUE(SettlesOn(1, kOther));
  // The route's request timeout bounds the call.
  absl::Time start = absl::Now();
  CallResult slow = Call(kSay);
  EXPECT_EQ(slow.status.code(), absl::StatusCode::kDeadlineExceeded)
      << slow.status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // The injector answers without reaching a backend.
  const int64_t before = backends_[1]->calls_received();
  CallResult chaos = Call("/test.Echo/Chaos");
  EXPECT_EQ(chaos.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(chaos.status.message(), HasSubstr("chaos monkey"));
  EXPECT_EQ(backends_[1]->calls_received(), before);
}

TEST_F(LinkerdPolicyTest, HeaderModifiersChangeWhatIsSentAndReturned) {
  // The echo backends answer with the request's "echo-*" metadata.
  policies_->Set(
      kTarget,
      Parse(absl::StrCat(
          "metadata { default: 'books' } protocol { http2 { routes { "
          "metadata { default: 'http' } rules { ",
          Split({{kA, 1}}),
          " filters { request_header_modifier { add { headers { name: "
          "'echo-added' value: 'yes' } } set { headers { name: 'echo-x' "
          "value: 'new' } } remove: 'echo-gone' } } filters { "
          "response_header_modifier { add { headers { name: 'x-route' value: "
          "'books' } } remove: 'echo-kept' } } } } } }")));
  StartMesh();
  ASSERT_TRUE(SettlesOn(1, kSay));
  CallOptions options;
  options.deadline = absl::Now() + absl::Seconds(5);
  options.metadata = {
      {"echo-x", "old"}, {"echo-gone", "1"}, {"echo-kept", "k"}};
  CallResult r = channel_->CallRaw(kSay, "x", options);
  ASSERT_TRUE(r.status.ok()) << r.status;
  std::map<std::string, std::string> got(r.headers.begin(), r.headers.end());
  // Request: added, set, removed (what the backend echoed shows it).
  EXPECT_EQ(got["echo-added"], "yes");
  EXPECT_EQ(got["echo-x"], "new");
  EXPECT_EQ(got.count("echo-gone"), 0u);
  // Response: added, removed (the backend echoed echo-kept).
  EXPECT_EQ(got["x-route"], "books");
  EXPECT_EQ(got.count("echo-kept"), 0u);
}

TEST_F(LinkerdPolicyTest, BackendFiltersApplyToTheirBackendsCallsOnly) {
  // a and b share the calls; a's filters set headers closer to the backend
  // than the rule's, b's failure injector answers all its calls.
  const std::string a_filters =
      "filters { request_header_modifier { set { headers { name: "
      "'echo-order' value: 'backend' } } } } filters { "
      "response_header_modifier { set { headers { name: 'x-order' value: "
      "'backend' } } add { headers { name: 'x-backend' value: 'a' } } } }";
  const std::string b_filters =
      "filters { failure_injector { status: 503 message: 'b is out' } }";
  policies_->Set(
      kTarget,
      Parse(absl::StrCat(
          "metadata { default: 'books' } protocol { http2 { routes { "
          "metadata { default: 'http' } rules { backends { random_available "
          "{ backends { weight: 1 backend { ",
          BackendTo(kA), " ", a_filters, " } } backends { weight: 1 backend { ",
          BackendTo(kB), " ", b_filters,
          " } } } } filters { request_header_modifier { set { headers { "
          "name: 'echo-order' value: 'rule' } } } } filters { "
          "response_header_modifier { set { headers { name: 'x-order' "
          "value: 'rule' } } } } } } } }")));
  StartMesh();
  ASSERT_TRUE(SettlesOn(1, kSay, /*n=*/1));
  int on_a = 0, on_b = 0;
  for (int i = 0; i < 40; ++i) {
    CallResult r = Call(kSay);
    if (r.status.ok()) {
      ++on_a;
      EXPECT_EQ(r.endpoint, backends_[1]->address());
      std::map<std::string, std::string> got(r.headers.begin(),
                                             r.headers.end());
      EXPECT_EQ(got["echo-order"], "backend");  // after the rule's
      EXPECT_EQ(got["x-order"], "rule");        // the rule's last
      EXPECT_EQ(got["x-backend"], "a");
    } else {
      ++on_b;
      EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
      EXPECT_THAT(r.status.message(), HasSubstr("b is out"));
    }
  }
  // 1:1 over 40 calls: both see some (each misses all with p = 2^-40).
  EXPECT_GT(on_a, 0);
  EXPECT_GT(on_b, 0);
  EXPECT_EQ(backends_[2]->calls_received(), 0);  // b's calls reach nothing
}

TEST_F(LinkerdPolicyTest, L5dRequestHeadersSetRetriesAndTimeoutsWhereAllowed) {
  // b's one endpoint answers UNAVAILABLE. Say allows the per-request
  // headers, Other does not; neither retries of its own.
  backends_[2]->set_status(grpc::StatusCode::UNAVAILABLE);
  policies_->Set(kTarget,
                 GrpcPolicy(GrpcRule(kSayMatch, Split({{kB, 1}}),
                                     "allow_l5d_request_headers: true") +
                            GrpcRule("matches { rpc { method: 'Other' } }",
                                     Split({{kB, 1}}))));
  StartMesh();
  ASSERT_TRUE(testing::WaitFor(  // the policy and b's endpoint are known
      [&] {
        return Call(kSay).status.code() == absl::StatusCode::kUnavailable &&
               Call(kOther).status.code() == absl::StatusCode::kUnavailable;
      },
      absl::Seconds(10)));
  auto call_with = [&](const char* method, Metadata headers) {
    CallOptions options;
    options.deadline = absl::Now() + absl::Seconds(5);
    options.metadata = std::move(headers);
    const int64_t before = backends_[2]->calls_received();
    CallResult r = channel_->CallRaw(method, "x", options);
    return std::make_pair(r, backends_[2]->calls_received() - before);
  };
  const Metadata retry = {{"l5d-retry-grpc", "unavailable"},
                          {"l5d-retry-limit", "2"}};
  // Allowed: 1 attempt + 2 retries.
  auto [said, attempts] = call_with(kSay, retry);
  EXPECT_EQ(said.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(attempts, 3);
  // Not allowed: the headers change nothing.
  auto [other, other_attempts] = call_with(kOther, retry);
  EXPECT_EQ(other.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(other_attempts, 1);
  // l5d-timeout bounds the call: b made slow, the call ends at 150 ms.
  backends_[2]->set_status(grpc::StatusCode::OK);
  backends_[2]->set_delay(absl::Seconds(2));
  const absl::Time start = absl::Now();
  CallResult timed = call_with(kSay, {{"l5d-timeout", "150ms"}}).first;
  EXPECT_EQ(timed.status.code(), absl::StatusCode::kDeadlineExceeded)
      << timed.status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

TEST_F(LinkerdPolicyTest, RetriesFollowTheRulesConditionsOnly) {
  // b's one endpoint answers UNAVAILABLE. Say retries UNAVAILABLE, Other
  // retries INTERNAL only: Say makes 1 + max_retries attempts, Other one.
  backends_[2]->set_status(grpc::StatusCode::UNAVAILABLE);
  policies_->Set(kTarget,
                 GrpcPolicy(GrpcRule(kSayMatch, Split({{kB, 1}}),
                                     "retry { max_retries: 2 conditions { "
                                     "unavailable: true } }") +
                            GrpcRule("", Split({{kB, 1}}),
                                     "retry { max_retries: 2 conditions { "
                                     "internal: true } }")));
  StartMesh();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return Call(kOther).status.code() == absl::StatusCode::kUnavailable;
      },
      absl::Seconds(10)));
  for (int i = 0; i < 10; ++i) {
    int64_t before = backends_[2]->calls_received();
    CallResult r = Call(kSay);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_EQ(backends_[2]->calls_received() - before, 3);
    before = backends_[2]->calls_received();
    r = Call(kOther);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_EQ(backends_[2]->calls_received() - before, 1);
  }
}

TEST_F(LinkerdPolicyTest, MaxRequestBytesBoundsWhatIsRetried) {
  // b answers UNAVAILABLE; Say retries it twice for a body of at most
  // 16 bytes, Other for one of at most 1 MiB (past mesh's 64 KiB default).
  backends_[2]->set_status(grpc::StatusCode::UNAVAILABLE);
  policies_->Set(kTarget,
                 GrpcPolicy(GrpcRule(kSayMatch, Split({{kB, 1}}),
                                     "retry { max_retries: 2 "
                                     "max_request_bytes: 16 conditions { "
                                     "unavailable: true } }") +
                            GrpcRule("", Split({{kB, 1}}),
                                     "retry { max_retries: 2 "
                                     "max_request_bytes: 1048576 conditions { "
                                     "unavailable: true } }")));
  StartMesh();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return Call(kOther).status.code() == absl::StatusCode::kUnavailable;
      },
      absl::Seconds(10)));
  auto attempts = [&](const char* method, size_t bytes) {
    const int64_t before = backends_[2]->calls_received();
    EXPECT_EQ(Call(method, std::string(bytes, 'b')).status.code(),
              absl::StatusCode::kUnavailable);
    return backends_[2]->calls_received() - before;
  };
  EXPECT_EQ(attempts(kSay, 16), 3);
  EXPECT_EQ(attempts(kSay, 17), 1);
  EXPECT_EQ(attempts(kOther, 100 * 1024), 3);
}

TEST_F(LinkerdPolicyTest, HttpStatusRetryConditionsLeaveAGrpcAnswerAlone) {
  // An HTTPRoute retrying 5xx: a gRPC answer is HTTP 200 whatever its
  // status, so an UNAVAILABLE answer is not retried (the default failure
  // classes would retry it).
  backends_[2]->set_status(grpc::StatusCode::UNAVAILABLE);
  policies_->Set(
      kTarget,
      Parse(absl::StrCat(
          "metadata { default: 'books' } protocol { http2 { routes { "
          "metadata { default: 'http' } rules { ",
          Split({{kB, 1}}),
          " retry { max_retries: 2 conditions { status_ranges { start: 500 "
          "end: 599 } } } } } } }")));
  StartMesh();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        Call(kSay);
        return backends_[2]->calls_received() > 0;
      },
      absl::Seconds(10)));
  for (int i = 0; i < 10; ++i) {
    const int64_t before = backends_[2]->calls_received();
    CallResult r = Call(kSay);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_EQ(backends_[2]->calls_received() - before, 1);
  }
}

TEST_F(LinkerdPolicyTest,
       NoMatchingRouteIsNotFoundAndAnEmptyDistributionFails) {
  policies_->Set(kTarget,
                 GrpcPolicy(GrpcRule(kSayMatch, "backends { empty {} }")));
  StartMesh();
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Call(kOther).status.code() == absl::StatusCode::kNotFound; },
      absl::Seconds(10)));
  CallResult r = Call(kOther);
  EXPECT_THAT(r.status.message(), HasSubstr("no matching route"));
  r = Call(kSay);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status.message(), HasSubstr("an empty distribution"));
  for (const auto& b : backends_) EXPECT_EQ(b->calls_received(), 0);
}

TEST_F(LinkerdPolicyTest, NotFoundFallsBackToTheProfileForGood) {
  policies_->Refuse(kTarget,
                    grpc::Status(grpc::StatusCode::NOT_FOUND, "no such svc"));
  StartMesh();
  ASSERT_TRUE(SettlesOn(0, kSay));  // the target's own endpoints
  EXPECT_TRUE(SettlesOn(0, kOther));
  // Final: no watch is opened again.
  EXPECT_EQ(policies_->watches(kTarget), 1);
  EXPECT_THAT(mesh_->Describe(), HasSubstr("NOT_FOUND"));
}

TEST_F(LinkerdPolicyTest, AControllerWithoutTheApiFallsBackToTheProfile) {
  // A gRPC server with the Destination service only answers
  // OutboundPolicies UNIMPLEMENTED, as a Linkerd 2.12 control plane does.
  // The profile splits the target to b.
  config_.targets[kTarget].profile.emplace().dst_overrides = {{kB, 1}};
  io::linkerd::proxy::destination::Destination::Service destination_only;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&destination_only);
  std::unique_ptr<grpc::Server> bare = builder.BuildAndStart();
  ASSERT_NE(bare, nullptr);
  StartMesh(absl::StrCat("127.0.0.1:", port));
  EXPECT_TRUE(SettlesOn(2, kSay));
  EXPECT_THAT(mesh_->Describe(), HasSubstr("UNIMPLEMENTED"));
}

TEST_F(LinkerdPolicyTest, TheLocalControlPlaneServesPoliciesAndFollowsEdits) {
  // The control plane's own OutboundPolicies: a GRPCRoute from its config
  // sends Say to b; an edit sends it to a, and a rule with a failure
  // injector answers for it; a target without a policy is served Linkerd's
  // default (its own endpoints).
  auto route_to = [](const std::string& backend, bool fail) {
    PolicySpec p;
    p.protocol = "grpc";
    PolicyRuleSpec rule;
    PolicyMatchSpec say;
    say.service = "test.Echo";
    say.rpc_method = "Say";
    rule.matches.push_back(say);
    rule.backends.emplace();
    rule.backends->emplace_back(backend, 1);
    if (fail) rule.failure_injector = PolicyFailureSpec{7, "refused", 1.0};
    p.routes.push_back(PolicyRouteSpec{"say", {}, {rule}});
    return p;
  };
  config_.targets[kTarget].policy = route_to(kB, false);
  StartMesh(kControlPlane);
  EXPECT_TRUE(SettlesOn(2, kSay));
  EXPECT_EQ(control_plane_->calls("OutboundPolicies.Watch", kTarget), 1);
  EXPECT_THAT(mesh_->Describe(), HasSubstr(R"("route_kind":"GRPCRoute")"));
  EXPECT_THAT(mesh_->Describe(), HasSubstr(R"("route_name":"say")"));
  // The route's metrics carry its identity as linkerd2-proxy labels it.
  absl::StatusOr<testing::PrometheusText> metrics =
      testing::ParsePrometheusText(mesh_->Metrics());
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_GE(metrics
                ->Value("route_request_total",
                        {{"route", "say"},
                         {"parent_kind", "Service"},
                         {"parent_name", "books"},
                         {"parent_namespace", "ns"},
                         {"route_group", "gateway.networking.k8s.io"},
                         {"route_kind", "GRPCRoute"},
                         {"route_name", "say"},
                         {"route_namespace", "ns"}})
                .value_or(0),
            5);

  config_.targets[kTarget].policy = route_to(kA, false);
  control_plane_->SetConfig(config_);
  EXPECT_TRUE(SettlesOn(1, kSay));
  config_.targets[kTarget].policy = route_to(kA, true);
  control_plane_->SetConfig(config_);
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Call(kSay).status.code() == absl::StatusCode::kPermissionDenied;
      },
      absl::Seconds(10)));
  // No policy in the config: the default policy routes to the target.
  config_.targets[kTarget].policy.reset();
  control_plane_->SetConfig(config_);
  EXPECT_TRUE(SettlesOn(0, kSay));
  // One stream all along: edits are followed, not re-asked.
  EXPECT_EQ(control_plane_->calls("OutboundPolicies.Watch", kTarget), 1);
}

TEST_F(LinkerdPolicyTest, FailureAccrualEjectsAndProbesBack) {
  // Say goes to a, whose second endpoint (backend 2) answers INTERNAL. The
  // policy's failure accrual ejects it after 2 failures in a row (the
  // channel's own rule would wait for 5), for 300 ms; healed, it is probed
  // and takes calls again.
  config_.targets[kA].endpoints = {Endpoint(1), Endpoint(2)};
  backends_[2]->set_status(grpc::StatusCode::INTERNAL);
  // Backend 1 is the slower: P2C (which counts no failure against a fast
  // endpoint) keeps picking backend 2 until it is ejected.
  backends_[1]->set_delay(absl::Milliseconds(50));
  policies_->Set(
      kTarget,
      GrpcPolicy(GrpcRule(kSayMatch, Split({{kA, 1}})),
                 "failure_accrual { consecutive_failures { max_failures: 2 "
                 "backoff { min_backoff { nanos: 300000000 } max_backoff { "
                 "nanos: 300000000 } } } }"));
  StartMesh();
  const std::string failing = backends_[2]->address();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        Call(kSay);
        return ShownEjected(mesh_->Describe(), failing);
      },
      absl::Seconds(10)));
  EXPECT_EQ(backends_[2]->calls_received(), 2);
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr("\"consecutive_failures\":2,\"base_ms\":300"));
  // The backend's Peak-EWMA tuning (BackendTo's) came with it.
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr("\"default_rtt_ms\":30,\"decay_ms\":10000"));
  // While ejected, calls go to backend 1 only; healed, it is probed after
  // the backoff and answers again.
  backends_[2]->set_status(grpc::StatusCode::OK);
  EXPECT_TRUE(testing::WaitFor([&] { return Call(kSay).endpoint == failing; },
                               absl::Seconds(10)));
  EXPECT_FALSE(ShownEjected(mesh_->Describe(), failing));
}

TEST_F(LinkerdPolicyTest, APerTryTimeoutRetriesASlowAttemptElsewhere) {
  // a's backend 1 answers after 2 s, its backend 2 at once. Say retries
  // UNAVAILABLE only, with a per-try timeout of 100 ms: an attempt on
  // backend 1 is cancelled at 100 ms and retried, and every call is answered
  // by backend 2 (within its 5 s deadline backend 1 would answer too).
  config_.targets[kA].endpoints = {Endpoint(1), Endpoint(2)};
  backends_[1]->set_delay(absl::Seconds(2));
  policies_->Set(kTarget,
                 GrpcPolicy(GrpcRule(kSayMatch, Split({{kA, 1}}),
                                     "retry { max_retries: 3 conditions { "
                                     "unavailable: true } timeout { nanos: "
                                     "100000000 } }")));
  StartMesh();
  for (int i = 0; i < 6; ++i) {
    CallResult r = Call(kSay);
    EXPECT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.endpoint, backends_[2]->address());
  }
  EXPECT_GE(backends_[1]->calls_received(), 1);  // tried, then left
  // Without retries left the call ends naming the per-try timeout.
  policies_->Set(kTarget,
                 GrpcPolicy(GrpcRule(kSayMatch, Split({{kA, 1}}),
                                     "retry { max_retries: 0 conditions { "
                                     "unavailable: true } timeout { nanos: "
                                     "100000000 } }")));
  config_.targets[kA].endpoints = {Endpoint(1)};
  control_plane_->SetConfig(config_);
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        CallResult r = Call(kSay);
        return r.status.code() == absl::StatusCode::kDeadlineExceeded &&
               absl::StrContains(r.status.message(),
                                 "passed the route's per-try timeout of 100ms");
      },
      absl::Seconds(10)));
}

TEST_F(LinkerdPolicyTest, ResponseAndIdleTimeoutsEndTheCallUnretried) {
  // b's backend answers after 2 s. Say has a response timeout of 150 ms,
  // Other an idle timeout of 150 ms; both retry DEADLINE_EXCEEDED, which
  // these timeouts are not (as the proxy's): each call reaches the backend
  // once and ends DEADLINE_EXCEEDED naming its timeout, well before 2 s.
  backends_[2]->set_delay(absl::Seconds(2));
  const std::string retry =
      "retry { max_retries: 3 conditions { deadine_exceeded: true } }";
  policies_->Set(
      kTarget,
      GrpcPolicy(
          GrpcRule(kSayMatch, Split({{kB, 1}}),
                   "timeouts { response { nanos: 150000000 } } " + retry) +
          GrpcRule("matches { rpc { method: 'Other' } }", Split({{kB, 1}}),
                   "timeouts { idle { nanos: 150000000 } } " + retry)));
  StartMesh();
  struct Case {
    const char* method;
    const char* names;
  };
  for (const Case& c : {Case{kSay, "response timeout of 150ms"},
                        Case{kOther, "idle timeout of 150ms"}}) {
    SCOPED_TRACE(c.method);
    CallResult r;
    ASSERT_TRUE(testing::WaitFor(  // the policy and b's endpoint are known
        [&] {
          r = Call(c.method);
          return r.status.code() == absl::StatusCode::kDeadlineExceeded;
        },
        absl::Seconds(10)))
        << r.status;
    const int64_t before = backends_[2]->calls_received();
    const absl::Time start = absl::Now();
    r = Call(c.method);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded) << r.status;
    EXPECT_THAT(r.status.message(), HasSubstr(c.names));
    EXPECT_LT(absl::Now() - start, absl::Seconds(2));
    EXPECT_EQ(backends_[2]->calls_received(), before + 1);  // not retried
  }
}

TEST_F(LinkerdPolicyTest, ABackendsQueueBoundsTheCallsWaitingForIt) {
  // b exists without endpoints; its queue holds 2 calls, each for 300 ms
  // (the channel's own fail-fast timeout is 3 s).
  config_.targets[kB].endpoints.clear();
  policies_->Set(
      kTarget,
      GrpcPolicy(
          GrpcRule(kSayMatch, Split({{kB, 1}},
                                    "queue { capacity: 2 failfast_timeout { "
                                    "nanos: 300000000 } }")) +
          GrpcRule("", Split({{kA, 1}}))));
  StartMesh();
  // Once the policy and b's queue apply, a call waits 300 ms and fails.
  CallResult r;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        r = Call(kSay);
        return absl::StrContains(
            r.status.message(),
            "waited 300ms for endpoints (the backend's queue fail-fast "
            "timeout)");
      },
      absl::Seconds(10)))
      << r.status;
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  // Two calls wait; a third finds the queue full and fails at once.
  struct Waiting {
    internal::Notification done;
    CallResult result;
  };
  Waiting first, second;
  CallOptions options;
  options.deadline = absl::Now() + absl::Seconds(5);
  const absl::Time start = absl::Now();
  for (Waiting* w : {&first, &second}) {
    channel_->CallRawAsync(kSay, "x", options, [w](CallResult result) {
      w->result = std::move(result);
      w->done.Notify();
    });
  }
  r = Call(kSay);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(
      r.status.message(),
      HasSubstr(absl::StrCat("the queue of '", kB, "' is full (capacity 2)")));
  EXPECT_FALSE(first.done.HasBeenNotified());
  EXPECT_FALSE(second.done.HasBeenNotified());
  for (Waiting* w : {&first, &second}) {
    ASSERT_TRUE(w->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_EQ(w->result.status.code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(w->result.status.message(),
                HasSubstr("the backend's queue fail-fast timeout"));
  }
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  // The queue's settings are shown with b's policy.
  EXPECT_THAT(mesh_->Describe(), HasSubstr("\"queue_capacity\":2,"
                                           "\"fail_fast_timeout_ms\":300"));
}

TEST_F(LinkerdPolicyTest, AForwardBackendSendsToItsOneAddress) {
  // Say is forwarded to backend 2's address, which no Destination.Get
  // names; the rest goes to a. An update moves the forward to backend 0.
  policies_->Set(
      kTarget,
      GrpcPolicy(GrpcRule(kSayMatch, ForwardTo(backends_[2]->address())) +
                 GrpcRule("", Split({{kA, 1}}))));
  StartMesh();
  ASSERT_TRUE(SettlesOn(2, kSay));
  ASSERT_TRUE(SettlesOn(1, kOther));
  EXPECT_THAT(
      mesh_->Describe(),
      HasSubstr(absl::StrCat("linkerd-forward ", backends_[2]->address())));
  policies_->Set(
      kTarget,
      GrpcPolicy(GrpcRule(kSayMatch, ForwardTo(backends_[0]->address())) +
                 GrpcRule("", Split({{kA, 1}}))));
  EXPECT_TRUE(SettlesOn(0, kSay));
  EXPECT_TRUE(SettlesOn(1, kOther));
}

TEST_F(LinkerdPolicyTest, TapEventsCarryThePolicyRoutesIdentity) {
  // linkerd tap shows a request's route as the proxy labels it: the
  // parent Service and the GRPCRoute.
  policies_->Set(kTarget, GrpcPolicy(GrpcRule("", Split({{kB, 1}}))));
  tap_address_ = "127.0.0.1:0";
  StartMesh();
  ASSERT_TRUE(SettlesOn(2, kSay));
  testing::Traffic traffic(*channel_);
  testing::Observed got = testing::Observe(
      absl::StrCat("127.0.0.1:", mesh_->tap_port()), testing::AllRequests(3));
  traffic.Stop();
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  int inits = 0;
  for (const auto& e : got.events) {
    if (!e.http().has_request_init()) continue;
    ++inits;
    const auto& labels = e.route_meta().labels();
    EXPECT_EQ(labels.at("route"), "books-route");
    EXPECT_EQ(labels.at("route_kind"), "GRPCRoute");
    EXPECT_EQ(labels.at("route_name"), "books-route");
    EXPECT_EQ(labels.at("route_namespace"), "ns");
    EXPECT_EQ(labels.at("parent_kind"), "Service");
    EXPECT_EQ(labels.at("parent_name"), "books");
  }
  EXPECT_EQ(inits, 3);
}

TEST_F(LinkerdPolicyTest, AProfileWithASplitOverridesThePolicy) {
  config_.targets[kTarget].profile.emplace().dst_overrides = {{kA, 1}};
  policies_->Set(kTarget, GrpcPolicy(GrpcRule("", Split({{kB, 1}}))));
  StartMesh();
  ASSERT_TRUE(testing::WaitFor([&] { return policies_->open(kTarget) == 1; },
                               absl::Seconds(10)));
  EXPECT_TRUE(SettlesOn(1, kSay, 20));
  EXPECT_EQ(backends_[2]->calls_received(), 0);
}

TEST_F(LinkerdPolicyTest, AHostileControllerLeavesTheLastGoodPolicy) {
  policies_->Set(kTarget, GrpcPolicy(GrpcRule("", Split({{kB, 1}}))));
  StartMesh();
  ASSERT_TRUE(SettlesOn(2, kSay));
  // Bytes that do not parse: the stream ends and is opened again; the
  // policy stays in force meanwhile.
  policies_->SendRaw(kTarget, std::string("\x0a\xff\xff\xff\xff\x0f", 6));
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        CallResult r = Call(kSay);
        EXPECT_EQ(r.endpoint, backends_[2]->address());
        return policies_->watches(kTarget) >= 2;
      },
      absl::Seconds(10)));
  // A policy that parses but is refused (no protocol): kept out, stream
  // kept.
  const int watches = policies_->watches(kTarget);
  policies_->Set(kTarget, Parse("metadata { default: 'broken' }"));
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return mesh_->Describe().find("it has no protocol") !=
               std::string::npos;
      },
      absl::Seconds(10)));
  EXPECT_TRUE(SettlesOn(2, kSay));
  EXPECT_EQ(policies_->watches(kTarget), watches);
  // A rule list past the route table's limit: the first 1,000 rules are
  // kept (Say's, first, moves its calls from b to a), the rest dropped
  // with one line, and the stream stays.
  std::string rules = GrpcRule(kSayMatch, Split({{kA, 1}}));
  for (int i = 0; i < 1500; ++i) {
    absl::StrAppend(&rules, GrpcRule(absl::StrCat("matches { rpc { service: 'x",
                                                  i, "' } }"),
                                     Split({{kB, 1}})));
  }
  policies_->Set(kTarget, GrpcPolicy(rules));
  EXPECT_TRUE(SettlesOn(1, kSay));
  EXPECT_EQ(policies_->watches(kTarget), watches);
}

}  // namespace
}  // namespace mesh
