// Tap end to end: a Mesh serving the Observe API on 127.0.0.1, real gRPC
// backends, and a real gRPC client of io.linkerd.proxy.tap.Tap/Observe;
// plus the in-process Mesh::Tap and the hook around a test-only transport.
//
// "Non-local peer": the server treats only 127.0.0.1 and ::1 as local, so a
// client whose connection comes from 127.0.0.2 (through a relay that binds
// its outgoing socket there, testing::RelayFrom127002) stands for a remote
// one.
#include <grpcpp/grpcpp.h>

#include <map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/tap.grpc.pb.h"
#include "mesh/mesh.h"
#include "tests/support/fake_transports.h"
#include "tests/support/tap_fixtures.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

namespace tap = ::io::linkerd::proxy::tap;
using ::mesh::testing::AllRequests;
using ::mesh::testing::Observe;
using ::mesh::testing::Observed;
using ::mesh::testing::RelayFrom127002;
using ::mesh::testing::Traffic;
using ::testing::HasSubstr;

constexpr char kTarget[] = "books.test:7000";

// Endpoints labelled zone=a and zone=b, a route "One", x-api-key redacted.
// Round robin, so that every endpoint gets its share of the traffic: P2C
// may leave one idle for many seconds after a slow call (its estimate
// decays with a 10 s time constant), and the tests that match on an
// endpoint need calls to reach it.
struct Fixture : testing::TapMesh {
  explicit Fixture(int backends_n = 2)
      : TapMesh(kTarget, backends_n, Options()) {
    std::vector<Endpoint> endpoints = testing::EndpointsOf(backends);
    for (size_t i = 0; i < endpoints.size(); ++i) {
      endpoints[i].labels["zone"] = i == 0 ? "a" : "b";
    }
    EXPECT_TRUE(discovery->SetEndpoints(kTarget, endpoints).ok());
    ServiceConfig config;
    config.routes = {
        RouteBuilder("One").GrpcMethod("test.Echo", "One").Build()};
    EXPECT_TRUE(discovery->SetServiceConfig(kTarget, config).ok());
    ChannelOptions channel_options;
    channel_options.balancer.kind = BalancerKind::kRoundRobin;
    channel = *mesh->NewChannel(kTarget, channel_options);
    EXPECT_TRUE(testing::WaitFor(
        [&] { return channel->service_config().has_value(); }));
  }
  static MeshOptions Options() {
    MeshOptions options;
    options.tap_redacted_headers = {"x-api-key"};
    return options;
  }
  std::unique_ptr<Channel> channel;
};

std::string HeaderValue(const io::linkerd::proxy::http_types::Headers& headers,
                        const std::string& name) {
  for (const auto& h : headers.headers()) {
    if (h.name() == name) return h.value();
  }
  return "(absent)";
}

TEST(ObserveTest, EventsArriveInOrderPerRequestAndTheLimitEndsTheStream) {
  Fixture f;
  for (auto& b : f.backends) b->set_delay(absl::Milliseconds(3));
  Traffic traffic(*f.channel, {{"authorization", "Bearer secret"},
                               {"cookie", "session=1"},
                               {"x-api-key", "k"},
                               {"x-ok", "visible"}});
  tap::ObserveRequest request = AllRequests(5);
  request.mutable_extract()->mutable_http()->mutable_headers();
  Observed got = Observe(f.tap_target(), request);
  traffic.Stop();

  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  ASSERT_EQ(got.events.size(), 15u);
  // Per stream id: RequestInit, ResponseInit, ResponseEnd, in that order,
  // with plausible times (the backends take 3 ms).
  std::map<uint64_t, std::vector<int>> kinds;
  for (const tap::TapEvent& e : got.events) {
    ASSERT_TRUE(e.has_http());
    const auto& http = e.http();
    EXPECT_EQ(e.proxy_direction(), tap::TapEvent::OUTBOUND);
    EXPECT_TRUE(e.has_destination());
    if (http.has_request_init()) {
      const auto& init = http.request_init();
      kinds[init.id().stream()].push_back(0);
      EXPECT_EQ(init.authority(), kTarget);
      EXPECT_THAT(init.path(), ::testing::StartsWith("/test.Echo/"));
      EXPECT_EQ(HeaderValue(init.headers(), "authorization"), "[redacted]");
      EXPECT_EQ(HeaderValue(init.headers(), "cookie"), "[redacted]");
      EXPECT_EQ(HeaderValue(init.headers(), "x-api-key"), "[redacted]");
      EXPECT_EQ(HeaderValue(init.headers(), "x-ok"), "visible");
      EXPECT_EQ(HeaderValue(init.headers(), ":path"), init.path());
      EXPECT_EQ(e.route_meta().labels().count("route"), 1u);
    } else if (http.has_response_init()) {
      const auto& rsp = http.response_init();
      kinds[rsp.id().stream()].push_back(1);
      EXPECT_EQ(rsp.http_status(), 200u);
      int64_t ms = rsp.since_request_init().seconds() * 1000 +
                   rsp.since_request_init().nanos() / 1000000;
      EXPECT_GE(ms, 2);
      EXPECT_LT(ms, 5000);
    } else {
      ASSERT_TRUE(http.has_response_end());
      const auto& end = http.response_end();
      kinds[end.id().stream()].push_back(2);
      EXPECT_EQ(end.eos().grpc_status_code(), 0u);
      EXPECT_EQ(end.response_bytes(), 5u);  // the echo of "hello"
    }
  }
  ASSERT_EQ(kinds.size(), 5u);
  uint64_t expected_stream = 0;
  for (const auto& [stream, seq] : kinds) {
    EXPECT_EQ(stream, expected_stream++);
    EXPECT_EQ(seq, (std::vector<int>{0, 1, 2})) << "stream " << stream;
  }
  // Nothing was lost on the way.
  EXPECT_EQ(got.trailers["mesh-tap-dropped-events"], "0");
}

// The requests a match lets through, over the wire: each tapped request
// satisfies the match, and at least one request was tapped.
TEST(ObserveTest, MatchTreeOverTheWire) {
  Fixture f;
  Traffic traffic(*f.channel);
  using Match = tap::ObserveRequest::Match;
  struct Case {
    std::string name;
    std::function<void(Match*)> build;
    std::function<bool(const tap::TapEvent::Http::RequestInit&,
                       const tap::TapEvent&)>
        holds;
  };
  std::vector<Case> cases = {
      {"path prefix",
       [](Match* m) {
         m->mutable_http()->mutable_path()->set_prefix("/test.Echo/On");
       },
       [](const auto& init, const auto&) {
         return init.path() == "/test.Echo/One";
       }},
      {"not path exact",
       [](Match* m) {
         m->mutable_not_()->mutable_http()->mutable_path()->set_exact(
             "/test.Echo/One");
       },
       [](const auto& init, const auto&) {
         return init.path() == "/test.Echo/Two";
       }},
      {"route label",
       [](Match* m) {
         m->mutable_route_label()->set_key("route");
         m->mutable_route_label()->set_value("One");
       },
       [](const auto& init, const auto&) {
         return init.path() == "/test.Echo/One";
       }},
      {"destination label",
       [](Match* m) {
         m->mutable_destination_label()->set_key("zone");
         m->mutable_destination_label()->set_value("b");
       },
       [](const auto&, const auto& e) {
         return e.destination_meta().labels().at("zone") == "b";
       }},
      {"any of authority exact and a method nobody uses",
       [](Match* m) {
         auto* any = m->mutable_any();
         any->add_matches()->mutable_http()->mutable_authority()->set_exact(
             kTarget);
         any->add_matches()->mutable_http()->mutable_method()->set_registered(
             io::linkerd::proxy::http_types::HttpMethod::GET);
       },
       [](const auto& init, const auto&) {
         return init.authority() == kTarget;
       }},
      {"all of POST and destination port range",
       [&f](Match* m) {
         auto* all = m->mutable_all();
         all->add_matches()->mutable_http()->mutable_method()->set_registered(
             io::linkerd::proxy::http_types::HttpMethod::POST);
         auto* ports =
             all->add_matches()->mutable_destination()->mutable_ports();
         ports->set_min(static_cast<uint32_t>(f.backends[0]->port()));
         ports->set_max(0);  // a 0 bound copies the other
       },
       [&f](const auto&, const auto& e) {
         return e.destination().port() ==
                static_cast<uint32_t>(f.backends[0]->port());
       }},
  };
  for (const Case& c : cases) {
    tap::ObserveRequest request;
    request.set_limit(4);
    c.build(request.mutable_match());
    Observed got = Observe(f.tap_target(), request);
    ASSERT_TRUE(got.status.ok())
        << c.name << ": " << got.status.error_message();
    int inits = 0;
    for (const tap::TapEvent& e : got.events) {
      if (!e.http().has_request_init()) continue;
      ++inits;
      EXPECT_TRUE(c.holds(e.http().request_init(), e)) << c.name;
    }
    EXPECT_EQ(inits, 4) << c.name;
  }
}

TEST(ObserveTest, InvalidRequestsAreRefusedNamingThePart) {
  Fixture f;
  auto expect_invalid = [&](const tap::ObserveRequest& request,
                            const std::string& part) {
    Observed got = Observe(f.tap_target(), request);
    EXPECT_EQ(got.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << part;
    EXPECT_THAT(got.status.error_message(), HasSubstr(part));
  };
  expect_invalid(AllRequests(0), "limit");
  tap::ObserveRequest no_match;
  no_match.set_limit(1);
  expect_invalid(no_match, "match");
  tap::ObserveRequest ports = AllRequests(1);
  auto* range = ports.mutable_match()->mutable_destination()->mutable_ports();
  range->set_min(9000);
  range->set_max(80);
  expect_invalid(ports, "ports");
  tap::ObserveRequest label = AllRequests(1);
  label.mutable_match()->mutable_destination_label()->set_value("x");
  expect_invalid(label, "key");
}

// An `any` of more leaves than a subscription may have (10 of 200,000 once
// cost every call 2 s): refused before it is built, naming the bound.
TEST(ObserveTest, AMatchPastTheNodeBoundIsRefusedNamingIt) {
  Fixture f;
  tap::ObserveRequest wide = AllRequests(1);
  auto* any = wide.mutable_match()->mutable_any();
  for (int i = 0; i < 20000; ++i) {
    any->add_matches()->mutable_http()->mutable_path()->set_exact(
        "/test.Echo/" + std::to_string(i));
  }
  Observed got = Observe(f.tap_target(), wide);
  EXPECT_EQ(got.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(got.status.error_message(),
              HasSubstr("match.any[255]: the match has more than 256 nodes"));
  EXPECT_THAT(got.status.error_message(), HasSubstr("kTapMaxMatchNodes"));

  tap::ObserveRequest long_strings = AllRequests(1);
  long_strings.mutable_match()->mutable_http()->mutable_path()->set_prefix(
      std::string(kTapMaxMatchBytes + 1, 'p'));
  got = Observe(f.tap_target(), long_strings);
  EXPECT_EQ(got.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(got.status.error_message(), HasSubstr("16384 bytes"));
  EXPECT_THAT(got.status.error_message(), HasSubstr("kTapMaxMatchBytes"));
}

// Bytes that are not an ObserveRequest: gRPC's typed service once answered
// UNIMPLEMENTED with an empty message; mesh reads them itself and says.
TEST(ObserveTest, ARequestThatDoesNotParseIsRefusedNamingWhy) {
  Fixture f;
  grpc::Status garbage =
      testing::ObserveBytes(f.tap_target(), std::string("\xff\xff\xff\x0f"));
  EXPECT_EQ(garbage.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << garbage.error_message();
  EXPECT_THAT(
      garbage.error_message(),
      HasSubstr("4-byte ObserveRequest does not parse: not a protobuf"));

  // 150 `not`s: well-formed, but past protobuf's recursion limit of 100.
  tap::ObserveRequest deep = AllRequests(1);
  tap::ObserveRequest::Match* m = deep.mutable_match();
  for (int i = 0; i < 150; ++i) m = m->mutable_not_();
  m->mutable_all();
  grpc::Status nested =
      testing::ObserveBytes(f.tap_target(), deep.SerializeAsString());
  EXPECT_EQ(nested.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << nested.error_message();
  EXPECT_THAT(nested.error_message(),
              HasSubstr("nested deeper than protobuf's limit of 100"));

  // The server still serves a good request.
  Traffic traffic(*f.channel);
  Observed good = Observe(f.tap_target(), AllRequests(1));
  EXPECT_TRUE(good.status.ok()) << good.status.error_message();
}

TEST(ObserveTest, APeerThatIsNotLocalIsRefused) {
  Fixture f;
  RelayFrom127002 relay(f.mesh->tap_port());
  Observed got =
      Observe("127.0.0.1:" + std::to_string(relay.port()), AllRequests(1));
  EXPECT_EQ(got.status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << got.status.error_message();
  EXPECT_THAT(got.status.error_message(), HasSubstr("127.0.0.2"));
}

TEST(TapTest, ASubscriberThatNeverReadsLosesEventsNotCalls) {
  Fixture f;
  TapOptions options;
  options.match = TapMatch::All({});
  options.limit = 1000;
  options.buffer = 4;
  auto sub = f.mesh->Tap(options);
  ASSERT_TRUE(sub.ok()) << sub.status();
  const int kCalls = 50;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(f.channel->CallRaw("/test.Echo/One", "x").status.ok());
  }
  // 3 events per call; the buffer kept 4, the rest were dropped.
  EXPECT_EQ((*sub)->dropped(), 3u * kCalls - 4);
  int pulled = 0;
  while ((*sub)->Next(absl::ZeroDuration())) ++pulled;
  EXPECT_EQ(pulled, 4);
  EXPECT_EQ(f.backends[0]->calls_received() + f.backends[1]->calls_received(),
            kCalls);
}

TEST(TapTest, InProcessMatchesPastTheBoundsAreRefusedNamingThem) {
  Fixture f;
  std::vector<TapMatch> leaves(200000, TapMatch::PathExact("/test.Echo/One"));
  TapOptions wide;
  wide.match = TapMatch::Any(std::move(leaves));
  absl::Status refused = f.mesh->Tap(wide).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("more than 256 nodes"));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("kTapMaxMatchNodes"));

  // Sixteen of 256 nodes fill the total; one more node is refused until
  // one of them ends.
  std::vector<std::unique_ptr<TapSubscription>> full;
  TapOptions widest;
  widest.match = TapMatch::Any(std::vector<TapMatch>(
      kTapMaxMatchNodes - 1, TapMatch::PathExact("/test.Echo/One")));
  for (uint32_t i = 0; i < kTapMaxTotalMatchNodes / kTapMaxMatchNodes; ++i) {
    auto sub = f.mesh->Tap(widest);
    ASSERT_TRUE(sub.ok()) << i << ": " << sub.status();
    full.push_back(*std::move(sub));
  }
  absl::Status over = f.mesh->Tap(TapOptions()).status();
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(over.message()),
              HasSubstr("matches have 4096 nodes and this one 1"));
  EXPECT_THAT(std::string(over.message()),
              HasSubstr("at most 4096 (kTapMaxTotalMatchNodes)"));
  full.pop_back();
  EXPECT_TRUE(f.mesh->Tap(TapOptions()).ok());
}

TEST(TapTest, InvalidInProcessOptionsAreRefused) {
  Fixture f;
  TapOptions options;
  options.limit = 0;
  EXPECT_EQ(f.mesh->Tap(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.limit = 1;
  options.match = TapMatch::DestinationPorts(9000, 80);
  EXPECT_THAT(f.mesh->Tap(options).status().message(), HasSubstr("port"));
}

TEST(TapTest, TheHookIsTransportNeutral) {
  auto discovery = StaticDiscovery::Create();
  ASSERT_TRUE(discovery->SetEndpoints(kTarget, {{"10.9.9.9:80"}}).ok());
  MeshOptions options;
  options.discovery = discovery;
  // A transport that is not gRPC: answers every request itself.
  options.transport_factory = [] {
    return testing::NewInlineTransport([](const TransportRequest& request) {
      TransportResponse response;
      response.http_status = 200;
      response.body = "local:" + request.body;
      response.trailers = {{"x-local", "1"}};
      return response;
    });
  };
  auto mesh = *Mesh::Create(options);
  auto channel = *mesh->NewChannel(kTarget);
  TapOptions tap_options;
  tap_options.match = TapMatch::PathPrefix("/local.");
  tap_options.limit = 2;
  tap_options.extract_headers = true;
  auto sub = mesh->Tap(tap_options);
  ASSERT_TRUE(sub.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(channel->CallRaw("/local.Svc/Get", "abc").body, "local:abc");
  }
  EXPECT_TRUE(channel->CallRaw("/other.Svc/Get", "abc").status.ok());
  std::vector<TapEvent> events;
  while (auto e = (*sub)->Next(absl::Seconds(1))) events.push_back(*e);
  ASSERT_EQ(events.size(), 6u);  // the limit: two requests
  EXPECT_TRUE((*sub)->done());
  EXPECT_EQ(events[0].kind, TapEvent::Kind::kRequestInit);
  EXPECT_EQ(events[0].destination, "10.9.9.9:80");
  EXPECT_EQ(events[0].path, "/local.Svc/Get");
  EXPECT_EQ(events[2].kind, TapEvent::Kind::kResponseEnd);
  EXPECT_EQ(events[2].response_bytes, 9u);
  EXPECT_THAT(events[2].trailers,
              ::testing::Contains(
                  std::make_pair(std::string("x-local"), std::string("1"))));
}

}  // namespace
}  // namespace mesh
