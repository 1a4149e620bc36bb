// Hedged requests (Route::hedge_policy) and per-try timeouts, against real
// servers on 127.0.0.1. Two kinds: gRPC echo backends (tools/common), and
// HTTP/2 servers of the tests' own (tests/support/h2_test_server) that
// answer gRPC calls Trailers-Only, as a gRPC server answers with a status
// alone, scripted by the order the requests arrive in across a test's
// servers: a test knows what each attempt meets without knowing which
// endpoint the balancer picks first.
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "mesh/discovery.h"
#include "mesh/mesh.h"
#include "tests/support/h2_test_server.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/test_support.h"
#include "tools/common/echo_backend.h"

namespace mesh {
namespace {

using testing::H2TestServer;

constexpr char kTarget[] = "books:7000";
constexpr char kMethod[] = "/books.Library/GetBook";

HedgePolicy Policy(uint32_t attempts, absl::Duration delay,
                   std::vector<absl::StatusCode> non_fatal = {}) {
  HedgePolicy p;
  p.max_attempts = attempts;
  p.delay = delay;
  p.non_fatal_codes = std::move(non_fatal);
  return p;
}

// What a scripted server answers one attempt: a gRPC status (Trailers-
// Only), after a delay, with grpc-retry-pushback-ms if `pushback` is set.
struct Answer {
  absl::StatusCode code = absl::StatusCode::kNotFound;
  absl::Duration delay = absl::ZeroDuration();
  std::string pushback;
};
// The answer to the request that arrived `arrival`-th (0: the first) at
// any of the test's scripted servers.
using Script = std::function<Answer(int arrival)>;

// A mesh over `count` endpoints whose one route, GetBook, hedges as
// `policy` says (none: retries as `retry` says).
class HedgingTest : public ::testing::Test {
 protected:
  void StartScripted(int count, Script script,
                     std::optional<HedgePolicy> policy,
                     std::optional<RetryPolicy> retry = std::nullopt) {
    for (int i = 0; i < count; ++i) {
      auto server = std::make_unique<H2TestServer>(
          [script, arrivals = arrivals_](const H2TestServer::Request&) {
            const int arrival = arrivals->fetch_add(1);
            const Answer a = script(arrival);
            H2TestServer::Response out;
            out.headers = {
                {"content-type", "application/grpc"},
                {"grpc-status", absl::StrCat(static_cast<int>(a.code))},
                {"grpc-message", absl::StrCat("request ", arrival + 1)}};
            if (!a.pushback.empty()) {
              out.headers.emplace_back("grpc-retry-pushback-ms", a.pushback);
            }
            out.delay = a.delay;
            out.headers_only = true;
            return out;
          });
      ASSERT_TRUE(server->Start().ok());
      endpoints_.emplace_back(server->address());
      servers_.push_back(std::move(server));
    }
    StartMesh(policy, retry);
  }

  void StartEcho(int count, std::optional<HedgePolicy> policy,
                 std::optional<RetryBudget> budget = std::nullopt) {
    backends_ = testing::StartBackends(count);
    endpoints_ = testing::EndpointsOf(backends_);
    budget_ = budget;
    StartMesh(policy, std::nullopt);
  }

  void StartMesh(std::optional<HedgePolicy> policy,
                 std::optional<RetryPolicy> retry) {
    discovery_ = StaticDiscovery::Create();
    ASSERT_TRUE(discovery_->SetEndpoints(kTarget, endpoints_).ok());
    RouteBuilder builder("GetBook");
    builder.Path(kMethod);
    if (policy) builder.Hedged(*policy);
    // With a hedging policy, the retry policy's per-try timeout only (the
    // route is not retryable).
    if (retry && !policy) builder.Retryable(*retry);
    Route route = builder.Build();
    if (retry && policy) route.retry_policy = *retry;
    ServiceConfig config;
    config.routes.push_back(route);
    config.retry_budget = budget_;
    ASSERT_TRUE(discovery_->SetServiceConfig(kTarget, config).ok());
    MeshOptions options;
    options.discovery = discovery_;
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
    ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  }

  CallResult Call(absl::Duration timeout = absl::Seconds(5)) {
    CallOptions options;
    options.timeout = timeout;
    return channel_->CallRaw(kMethod, "x", options);
  }

  int ScriptedRequests() const {
    int n = 0;
    for (const auto& s : servers_) n += s->requests();
    return n;
  }
  int ScriptedCancelled() const {
    int n = 0;
    for (const auto& s : servers_) n += s->cancelled();
    return n;
  }
  int64_t EchoCalls() const {
    int64_t n = 0;
    for (const auto& b : backends_) n += b->calls_received();
    return n;
  }

  absl::StatusOr<std::unique_ptr<TapSubscription>> TapEverything() {
    TapOptions tap;
    tap.match = TapMatch::All({});
    tap.extract_headers = true;
    auto subscription = mesh_->Tap(tap);
    EXPECT_TRUE(subscription.ok()) << subscription.status();
    return subscription;
  }
  // The first `n` requests the tap hook saw, in the order they were sent
  // (fewer if 5 s pass first).
  static std::vector<TapEvent> TappedRequests(TapSubscription& subscription,
                                              size_t n) {
    std::vector<TapEvent> requests;
    const absl::Time until = absl::Now() + absl::Seconds(5);
    while (requests.size() < n && absl::Now() < until) {
      std::optional<TapEvent> e = subscription.Next(absl::Milliseconds(100));
      if (e && e->kind == TapEvent::Kind::kRequestInit) requests.push_back(*e);
    }
    return requests;
  }

  double Metric(const std::string& name) const {
    auto text = testing::ParsePrometheusText(mesh_->Metrics());
    EXPECT_TRUE(text.ok()) << text.status();
    if (!text.ok()) return -1;
    return text->Value(name, {{"route", "GetBook"}}).value_or(-1);
  }

  std::shared_ptr<std::atomic<int>> arrivals_ =
      std::make_shared<std::atomic<int>>(0);
  std::vector<std::unique_ptr<H2TestServer>> servers_;
  std::vector<std::unique_ptr<tools::EchoBackend>> backends_;
  std::vector<Endpoint> endpoints_;
  std::optional<RetryBudget> budget_;
  std::shared_ptr<StaticDiscovery> discovery_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

// The first request ends with `code` at once; any later one answers.
Script FailFirstWith(absl::StatusCode code) {
  return [code](int arrival) {
    Answer a;
    if (arrival == 0) a.code = code;
    return a;
  };
}

// The first request stalls past the call's timeout; any later one answers.
Answer StallTheFirst(int arrival) {
  Answer a;
  if (arrival == 0) a.delay = absl::Seconds(30);
  return a;
}

TEST_F(HedgingTest, AHedgeGoesElsewhereAfterTheDelayAndTheLoserIsCancelled) {
  StartScripted(2, StallTheFirst, Policy(2, absl::Milliseconds(50)));
  CallResult r = Call();
  // The hedge's answer, in time: the first attempt would take 30 s.
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound) << r.status;
  EXPECT_EQ(r.status.message(), "request 2");
  // One request each: the hedge went to the other endpoint; the first was
  // cancelled, its server told.
  EXPECT_EQ(servers_[0]->requests(), 1);
  EXPECT_EQ(servers_[1]->requests(), 1);
  EXPECT_EQ(ScriptedRequests(), 2);
  EXPECT_TRUE(testing::WaitFor([&] { return ScriptedCancelled() == 1; }));
  for (const auto& s : servers_) {
    if (s->address() == r.endpoint) {
      EXPECT_EQ(s->cancelled(), 0);
    }
  }
  EXPECT_EQ(Metric("route_hedge_total"), 1);
  EXPECT_EQ(Metric("route_actual_request_total"), 2);
  EXPECT_EQ(Metric("route_retry_total"), 0);
}

TEST_F(HedgingTest, TapMarksTheHedgeAndItsAttemptNumber) {
  StartScripted(2, StallTheFirst, Policy(2, absl::Milliseconds(50)));
  auto subscription = TapEverything();
  CallResult r = Call();
  EXPECT_EQ(r.status.message(), "request 2") << r.status;
  std::vector<TapEvent> requests = TappedRequests(**subscription, 2);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].attempt, 1u);
  EXPECT_FALSE(requests[0].hedge);
  EXPECT_EQ(requests[1].attempt, 2u);
  EXPECT_TRUE(requests[1].hedge);
  EXPECT_NE(requests[0].destination, requests[1].destination);
  // The hedge carries gRFC A6's header (gRPC 1.51's transport does not put
  // it on the wire: see docs/routing.md).
  bool said = false;
  for (const auto& [name, value] : requests[1].headers) {
    said |= name == "grpc-previous-rpc-attempts" && value == "1";
  }
  EXPECT_TRUE(said);
}

TEST_F(HedgingTest, DelayZeroSendsEveryAttemptAtOnceToDistinctEndpoints) {
  StartScripted(3, StallTheFirst, Policy(3, absl::ZeroDuration()));
  auto subscription = TapEverything();
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound) << r.status;
  // All three sent, each to its own endpoint. (The one the winner cancels
  // may never reach its server: the count there would race.)
  std::vector<TapEvent> requests = TappedRequests(**subscription, 3);
  ASSERT_EQ(requests.size(), 3u);
  std::set<std::string> destinations;
  for (const TapEvent& e : requests) destinations.insert(e.destination);
  EXPECT_EQ(destinations.size(), 3u);
  EXPECT_EQ(Metric("route_hedge_total"), 2);
  // The stalled first is cancelled at least (the other hedge raced the
  // winner).
  EXPECT_TRUE(testing::WaitFor([&] { return ScriptedCancelled() >= 1; }));
}

TEST_F(HedgingTest, ANonFatalCodeSendsTheNextHedgeAtOnce) {
  // A delay past the call's timeout: only the non-fatal answer can send
  // the hedge in time.
  StartScripted(2, FailFirstWith(absl::StatusCode::kUnavailable),
                Policy(2, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound) << r.status;
  EXPECT_EQ(ScriptedRequests(), 2);
  EXPECT_EQ(Metric("route_hedge_total"), 1);
}

TEST_F(HedgingTest, AFatalCodeEndsTheCall) {
  StartScripted(2, FailFirstWith(absl::StatusCode::kInvalidArgument),
                Policy(2, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << r.status;
  EXPECT_EQ(ScriptedRequests(), 1);
  EXPECT_EQ(Metric("route_hedge_total"), 0);
}

TEST_F(HedgingTest, WhenEveryAttemptFailsNonFatallyTheLastAnswerIsTheCalls) {
  StartScripted(
      3,
      [](int) {
        Answer a;
        a.code = absl::StatusCode::kUnavailable;
        return a;
      },
      Policy(3, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_EQ(r.status.message(), "request 3");
  EXPECT_EQ(ScriptedRequests(), 3);
}

Answer FailFirstWithPushback(int arrival, const std::string& pushback) {
  Answer a;
  if (arrival == 0) {
    a.code = absl::StatusCode::kUnavailable;
    a.pushback = pushback;
  }
  return a;
}

TEST_F(HedgingTest, PushbackDelaysTheNextHedge) {
  StartScripted(
      2, [](int p) { return FailFirstWithPushback(p, "300"); },
      Policy(2, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  const absl::Time start = absl::Now();
  CallResult r = Call();
  // Not at once (the test above): after the 300 ms the server asked for.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound) << r.status;
  EXPECT_EQ(ScriptedRequests(), 2);
}

TEST_F(HedgingTest, APushbackPastTheDeadlineEndsTheCallThenWithTheLastAnswer) {
  StartScripted(
      2, [](int p) { return FailFirstWithPushback(p, "30000"); },
      Policy(2, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  CallResult r = Call(absl::Seconds(1));
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_EQ(ScriptedRequests(), 1);
}

TEST_F(HedgingTest, ANegativePushbackStopsTheHedges) {
  StartScripted(
      2, [](int p) { return FailFirstWithPushback(p, "-1"); },
      Policy(2, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_EQ(ScriptedRequests(), 1);
}

TEST_F(HedgingTest, CancellingACallThatWaitsOutAPushbackEndsItAtOnce) {
  // The first attempt fails non-fatally asking for 30 s; nothing is in
  // flight while the call waits. The caller's cancellation must end it.
  StartScripted(
      2, [](int p) { return FailFirstWithPushback(p, "30000"); },
      Policy(2, absl::Seconds(30), {absl::StatusCode::kUnavailable}));
  auto subscription = TapEverything();
  auto cancel = std::make_shared<Cancellation>();
  CallOptions options;
  options.cancel = cancel;
  options.timeout = absl::Seconds(60);
  absl::Notification done;
  CallResult result;
  channel_->CallRawAsync(kMethod, "x", options, [&](CallResult r) {
    result = std::move(r);
    done.Notify();
  });
  // The first attempt's answer has come when the tap sees its end.
  bool answered = false;
  const absl::Time until = absl::Now() + absl::Seconds(5);
  while (!answered && absl::Now() < until) {
    std::optional<TapEvent> e = (*subscription)->Next(absl::Milliseconds(100));
    answered = e && e->kind == TapEvent::Kind::kResponseEnd;
  }
  ASSERT_TRUE(answered);
  EXPECT_FALSE(done.HasBeenNotified());  // waiting out the pushback
  cancel->Cancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(result.status.code(), absl::StatusCode::kCancelled)
      << result.status;
  EXPECT_EQ(ScriptedRequests(), 1);
}

TEST_F(HedgingTest, AHashedRoutesHedgeStillGoesElsewhere) {
  // Every call hashes alike (the channel's id), so every first attempt
  // goes to one endpoint; the hedge must not follow the hash there.
  StartScripted(2, StallTheFirst, std::nullopt);
  ServiceConfig config;
  Route route = RouteBuilder("GetBook")
                    .Path(kMethod)
                    .Hedged(Policy(2, absl::Milliseconds(50)))
                    .Build();
  RequestHashPolicy by_channel;
  by_channel.kind = RequestHashPolicy::Kind::kChannel;
  route.hash_policies = {by_channel};
  config.routes.push_back(route);
  ASSERT_TRUE(discovery_->SetServiceConfig(kTarget, config).ok());
  // Consistent hashing: the same hash picks the same endpoint.
  ChannelOptions ring;
  ring.balancer.kind = BalancerKind::kRingHash;
  auto channel = mesh_->NewChannel(kTarget, ring);
  ASSERT_TRUE(channel.ok()) << channel.status();
  ASSERT_TRUE((*channel)->WaitForEndpoints(absl::Seconds(10)).ok());
  CallOptions options;
  options.timeout = absl::Seconds(5);
  CallResult r = (*channel)->CallRaw(kMethod, "x", options);
  EXPECT_EQ(r.status.message(), "request 2") << r.status;
  EXPECT_EQ(servers_[0]->requests(), 1);
  EXPECT_EQ(servers_[1]->requests(), 1);
}

TEST_F(HedgingTest, ASlowEndpointIsHedgedAroundAndItsCallsCancelled) {
  // Real gRPC servers: one stalls every call past the calls' timeout.
  StartEcho(2, Policy(2, absl::Milliseconds(50)));
  backends_[0]->set_delay(absl::Seconds(30));
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.endpoint, backends_[1]->address());
  }
  // Every call the slow one got was hedged to the other and cancelled.
  const int64_t slow = backends_[0]->calls_received();
  EXPECT_EQ(Metric("route_hedge_total"), slow);
  EXPECT_TRUE(testing::WaitFor(
      [&] { return backends_[0]->calls_cancelled() == slow; }));
}

TEST_F(HedgingTest, AnEmptyBudgetSendsNoHedge) {
  // Calls deposit nothing, and nothing is granted per second.
  RetryBudget budget;
  budget.retry_ratio = 0;
  budget.min_retries_per_second = 0;
  StartEcho(2, Policy(2, absl::Milliseconds(20)), budget);
  for (const auto& b : backends_) b->set_delay(absl::Milliseconds(100));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Call().status.ok());
  EXPECT_EQ(EchoCalls(), 5);
  EXPECT_EQ(Metric("route_hedge_total"), 0);
  EXPECT_EQ(Metric("route_hedge_skipped_total"), 5);
}

TEST_F(HedgingTest, TheCallersCancellationCancelsEveryAttempt) {
  StartEcho(3, Policy(3, absl::ZeroDuration()));
  for (const auto& b : backends_) b->set_delay(absl::Seconds(30));
  auto cancel = std::make_shared<Cancellation>();
  CallOptions options;
  options.cancel = cancel;
  options.timeout = absl::Seconds(30);
  absl::Notification done;
  CallResult result;
  channel_->CallRawAsync(kMethod, "x", options, [&](CallResult r) {
    result = std::move(r);
    done.Notify();
  });
  ASSERT_TRUE(testing::WaitFor([&] { return EchoCalls() == 3; }));
  cancel->Cancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(result.status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(testing::WaitFor([&] {
    int64_t n = 0;
    for (const auto& b : backends_) n += b->calls_cancelled();
    return n == 3;
  }));
}

TEST_F(HedgingTest, APolicyOutOfRangeIsRefusedNamingTheFieldAndTheLastKept) {
  StartScripted(2, StallTheFirst, Policy(2, absl::Milliseconds(10)));
  struct Case {
    HedgePolicy policy;
    bool retryable;
    const char* message;
  };
  const Case cases[] = {
      {Policy(1, absl::ZeroDuration()), false,
       "routes[0].hedge_policy.max_attempts 1 is not within 2..5"},
      {Policy(6, absl::ZeroDuration()), false,
       "routes[0].hedge_policy.max_attempts 6 is not within 2..5"},
      {Policy(2, absl::Milliseconds(-5)), false,
       "routes[0].hedge_policy.delay -5ms must be finite and >= 0"},
      {Policy(2, absl::ZeroDuration(), {absl::StatusCode::kOk}), false,
       "routes[0].hedge_policy.non_fatal_codes: 0 is not a gRPC status"},
      {Policy(2, absl::ZeroDuration()), true,
       "routes[0].hedge_policy on a retryable route"},
  };
  for (const Case& c : cases) {
    ServiceConfig config;
    Route route = RouteBuilder("GetBook").Path(kMethod).Build();
    route.hedge_policy = c.policy;
    route.is_retryable = c.retryable;
    config.routes.push_back(route);
    absl::Status s = discovery_->SetServiceConfig(kTarget, config);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s;
  }
  // The last good config stands: the call is still hedged.
  CallResult r = Call();
  EXPECT_EQ(r.status.message(), "request 2") << r.status;
  EXPECT_EQ(Metric("route_hedge_total"), 1);
}

TEST_F(HedgingTest, APerTryTimeoutOnAHedgedRouteIsTheDelayAndKeepsTheFirst) {
  // The policy's own delay is past the call's timeout: only the per-try
  // timeout can send the hedge in time.
  RetryPolicy retry;
  retry.per_try_timeout = absl::Milliseconds(50);
  StartScripted(2, StallTheFirst, Policy(2, absl::Seconds(30)), retry);
  CallResult r = Call();
  EXPECT_EQ(r.status.message(), "request 2") << r.status;
  EXPECT_EQ(Metric("route_hedge_total"), 1);
  EXPECT_EQ(Metric("route_retry_total"), 0);
  // The first was kept until the hedge answered, then cancelled.
  EXPECT_TRUE(testing::WaitFor([&] { return ScriptedCancelled() == 1; }));
}

TEST_F(HedgingTest, APerTryTimeoutCancelsTheAttemptAndRetriesElsewhere) {
  RetryPolicy retry;
  retry.per_try_timeout = absl::Milliseconds(100);
  StartScripted(2, StallTheFirst, std::nullopt, retry);
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound) << r.status;
  EXPECT_EQ(r.status.message(), "request 2");
  // The retry went to the other endpoint.
  EXPECT_EQ(servers_[0]->requests(), 1);
  EXPECT_EQ(servers_[1]->requests(), 1);
  EXPECT_EQ(ScriptedRequests(), 2);
  EXPECT_TRUE(testing::WaitFor([&] { return ScriptedCancelled() == 1; }));
  EXPECT_EQ(Metric("route_retry_total"), 1);
}

}  // namespace
}  // namespace mesh
