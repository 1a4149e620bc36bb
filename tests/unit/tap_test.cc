// The tap hub and hook over a test-only Transport: event order and content,
// stream ids, limits (also under concurrent requests), redaction, a reader
// that never reads, unsubscribing with exchanges in flight, and the
// untouched request when nobody taps.
#include "mesh/tap.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/transport.h"
#include "src/tap/tap_hub.h"
#include "src/tap/tap_transport.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_transports.h"

namespace mesh::internal {
namespace {

using ::mesh::testing::FakeClock;
using ::mesh::testing::FakeTransport;
using ::mesh::testing::FakeWire;
using ::testing::ElementsAre;
using ::testing::Pair;

using Kind = TapEvent::Kind;

TransportRequest GetBook() {
  TransportRequest request;
  request.method = "POST";
  request.scheme = "http";
  request.authority = "books.default.svc:7001";
  request.path = "/books.Library/GetBook";
  request.headers = {{"content-type", "application/grpc"}};
  request.body = "request-body";
  return request;
}

TransportResponse OkResponse() {
  TransportResponse response;
  response.http_status = 200;
  response.headers = {{"content-type", "application/grpc"}};
  response.body = "12345";
  response.trailers = {{"x-trace", "t1"}};
  return response;
}

// A hub with a fake clock, and a tap transport over a fake.
struct Rig {
  explicit Rig(std::vector<std::string> extra_redacted = {})
      : wire(std::make_shared<FakeWire>()),
        hub(std::make_shared<TapHub>(std::move(extra_redacted), &clock)),
        transport(NewTapTransport(std::make_unique<FakeTransport>(wire), hub)) {
    endpoint.labels = {{"pod", "books-1"}};
    wire->answer = OkResponse();
  }

  std::unique_ptr<TapSubscription> Subscribe(TapOptions options) {
    absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
        hub->Subscribe(options);
    EXPECT_TRUE(sub.ok()) << sub.status();
    return sub.ok() ? *std::move(sub) : nullptr;
  }

  // Sends GetBook (or `request`); counts the callbacks that ran.
  void Send(TransportRequest request = GetBook()) {
    request.route_labels = &route_labels;
    transport->Send(endpoint, std::move(request),
                    [this](TransportResponse) { completed.fetch_add(1); });
  }

  FakeClock clock;  // first: outlives the exchanges
  Endpoint endpoint{"10.1.2.3:7001"};
  std::map<std::string, std::string> route_labels = {{"route", "GetBook"}};
  std::atomic<int> completed{0};
  std::shared_ptr<FakeWire> wire;
  std::shared_ptr<TapHub> hub;
  std::unique_ptr<Transport> transport;
};

// Every event buffered now.
std::vector<TapEvent> Drain(TapSubscription& sub) {
  std::vector<TapEvent> out;
  while (std::optional<TapEvent> e = sub.Next(absl::ZeroDuration())) {
    out.push_back(*std::move(e));
  }
  return out;
}

std::vector<Kind> Kinds(const std::vector<TapEvent>& events) {
  std::vector<Kind> out;
  for (const TapEvent& e : events) out.push_back(e.kind);
  return out;
}

TapOptions Everything(uint32_t limit = 100) {
  TapOptions options;
  options.match = TapMatch::All({});
  options.limit = limit;
  return options;
}

TEST(TapTest, OneRequestGivesInitResponseInitEndInOrder) {
  Rig rig;
  rig.wire->hold = true;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything());
  rig.Send();
  rig.clock.Advance(absl::Milliseconds(5));
  ASSERT_EQ(rig.wire->AnswerHeld(OkResponse()), 1u);

  std::vector<TapEvent> events = Drain(*sub);
  ASSERT_THAT(
      Kinds(events),
      ElementsAre(Kind::kRequestInit, Kind::kResponseInit, Kind::kResponseEnd));
  const TapEvent& init = events[0];
  EXPECT_EQ(init.method, "POST");
  EXPECT_EQ(init.scheme, "http");
  EXPECT_EQ(init.authority, "books.default.svc:7001");
  EXPECT_EQ(init.path, "/books.Library/GetBook");
  for (const TapEvent& e : events) {
    EXPECT_EQ(e.base, 0u);
    EXPECT_EQ(e.stream, 0u);
    EXPECT_EQ(e.destination, "10.1.2.3:7001");
    // The endpoint's labels, and how it is reached (a hub without an
    // identity: plaintext, "disabled").
    EXPECT_THAT(
        e.destination_labels,
        ElementsAre(Pair("no_tls_reason", "disabled"), Pair("pod", "books-1"),
                    Pair("tls", "no_identity")));
    EXPECT_THAT(e.route_labels, ElementsAre(Pair("route", "GetBook")));
    EXPECT_TRUE(e.headers.empty());
    EXPECT_TRUE(e.trailers.empty());
  }
  EXPECT_EQ(events[1].since_request_init, absl::Milliseconds(5));
  EXPECT_EQ(events[1].http_status, 200u);
  EXPECT_EQ(events[2].since_request_init, absl::Milliseconds(5));
  EXPECT_EQ(events[2].since_response_init, absl::ZeroDuration());
  EXPECT_EQ(events[2].response_bytes, 5u);
  EXPECT_EQ(events[2].grpc_status, 0u);
  EXPECT_FALSE(events[2].reset_error_code.has_value());
  EXPECT_EQ(rig.completed.load(), 1);
}

TEST(TapTest, EventsStayInOrderPerRequestWithRealTime) {
  auto wire = std::make_shared<FakeWire>();
  wire->answer = OkResponse();
  auto hub = std::make_shared<TapHub>();  // the real clock
  std::unique_ptr<Transport> transport =
      NewTapTransport(std::make_unique<FakeTransport>(wire), hub);
  absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
      hub->Subscribe(Everything());
  ASSERT_TRUE(sub.ok());
  Endpoint endpoint("10.1.2.3:7001");
  for (int i = 0; i < 20; ++i) {
    transport->Send(endpoint, GetBook(), [](TransportResponse) {});
  }
  std::vector<TapEvent> events = Drain(**sub);
  ASSERT_EQ(events.size(), 60u);
  std::map<uint64_t, std::vector<const TapEvent*>> by_stream;
  for (const TapEvent& e : events) by_stream[e.stream].push_back(&e);
  ASSERT_EQ(by_stream.size(), 20u);
  for (const auto& [stream, list] : by_stream) {
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[0]->kind, Kind::kRequestInit);
    EXPECT_EQ(list[1]->kind, Kind::kResponseInit);
    EXPECT_EQ(list[2]->kind, Kind::kResponseEnd);
    EXPECT_GE(list[1]->since_request_init, absl::ZeroDuration());
    EXPECT_GE(list[2]->since_request_init, list[1]->since_request_init);
  }
}

TEST(TapTest, StreamIdsCountFromZeroAndBasesDifferPerSubscription) {
  Rig rig;
  std::unique_ptr<TapSubscription> first = rig.Subscribe(Everything());
  std::unique_ptr<TapSubscription> second = rig.Subscribe(Everything());
  for (int i = 0; i < 4; ++i) rig.Send();
  for (TapSubscription* sub : {first.get(), second.get()}) {
    std::vector<TapEvent> events = Drain(*sub);
    ASSERT_EQ(events.size(), 12u);
    std::set<uint32_t> bases;
    std::vector<uint64_t> streams;
    for (const TapEvent& e : events) {
      bases.insert(e.base);
      if (e.kind == Kind::kRequestInit) streams.push_back(e.stream);
    }
    EXPECT_EQ(bases.size(), 1u);
    EXPECT_EQ(*bases.begin(), sub == first.get() ? 0u : 1u);
    EXPECT_THAT(streams, ElementsAre(0u, 1u, 2u, 3u));
  }
}

TEST(TapTest, LimitTapsOnlyThatManyAndEndsAfterTheyFinishAndArePulled) {
  Rig rig;
  rig.wire->hold = true;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything(3));
  for (int i = 0; i < 10; ++i) rig.Send();

  std::vector<TapEvent> events = Drain(*sub);
  ASSERT_EQ(events.size(), 3u);  // three RequestInits, nothing else
  for (const TapEvent& e : events) EXPECT_EQ(e.kind, Kind::kRequestInit);
  EXPECT_FALSE(sub->done());  // the three are in flight

  // Answer them one by one: done only after the last ended and was pulled.
  std::deque<Transport::Callback> held;
  {
    std::lock_guard<std::mutex> lock(rig.wire->mu);
    held.swap(rig.wire->held);
  }
  ASSERT_EQ(held.size(), 10u);  // the first three are the tapped ones
  held[0](OkResponse());
  held[1](OkResponse());
  EXPECT_EQ(Drain(*sub).size(), 4u);
  EXPECT_FALSE(sub->done());  // one still in flight
  for (size_t i = 3; i < held.size(); ++i) held[i](OkResponse());
  EXPECT_FALSE(sub->done());
  held[2](OkResponse());
  EXPECT_FALSE(sub->done());  // its two events not pulled yet
  EXPECT_EQ(Drain(*sub).size(), 2u);
  EXPECT_TRUE(sub->done());
  EXPECT_FALSE(sub->Next(absl::Seconds(10)).has_value());  // at once
  EXPECT_EQ(rig.completed.load(), 10);
  EXPECT_EQ(rig.wire->requests.size(), 10u);
}

// The Observe server waits for events without a thread: on_ready runs once
// after Next(0) found nothing, when an event arrives or the end comes.
TEST(TapTest, OnReadyFiresOnceAfterAnEmptyReadAndAtTheEnd) {
  Rig rig;
  rig.wire->hold = true;
  std::atomic<int> ready{0};
  absl::StatusOr<std::unique_ptr<TapSubscription>> made =
      rig.hub->Subscribe(Everything(2), [&] { ready.fetch_add(1); });
  ASSERT_TRUE(made.ok());
  TapSubscription& sub = **made;
  rig.Send();
  EXPECT_EQ(ready.load(), 0);        // not armed: nobody found it empty yet
  EXPECT_EQ(Drain(sub).size(), 1u);  // ends with an empty Next: armed
  rig.Send();
  EXPECT_EQ(ready.load(), 1);
  ASSERT_EQ(rig.wire->AnswerHeld(OkResponse()), 2u);
  EXPECT_EQ(ready.load(), 1);  // still unread: no second call
  EXPECT_EQ(Drain(sub).size(), 5u);
  EXPECT_TRUE(sub.done());
  EXPECT_EQ(ready.load(), 1);

  // A reader that drained all but the last exchange is woken by its end,
  // and then finds the subscription done.
  absl::StatusOr<std::unique_ptr<TapSubscription>> other =
      rig.hub->Subscribe(Everything(1), [&] { ready.fetch_add(1); });
  ASSERT_TRUE(other.ok());
  rig.Send();
  EXPECT_EQ(Drain(**other).size(), 1u);
  ASSERT_EQ(rig.wire->AnswerHeld(OkResponse()), 1u);
  EXPECT_EQ(ready.load(), 2);
  EXPECT_EQ(Drain(**other).size(), 2u);
  EXPECT_TRUE((*other)->done());
}

TEST(TapTest, SubscriptionsPastTheCapAreRefusedNamingIt) {
  auto hub = std::make_shared<TapHub>(std::vector<std::string>{}, nullptr,
                                      /*max_subscriptions=*/2);
  auto a = hub->Subscribe(Everything());
  auto b = hub->Subscribe(Everything());
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = hub->Subscribe(Everything());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(c.status().message()),
              ::testing::HasSubstr("2 subscriptions are live"));
  a->reset();
  EXPECT_TRUE(hub->Subscribe(Everything()).ok());
}

TEST(TapTest, NextWakesWhenTheLastExchangeEndsOnAnotherThread) {
  Rig rig;
  rig.wire->hold = true;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything(1));
  rig.Send();
  ASSERT_TRUE(sub->Next(absl::ZeroDuration()).has_value());  // RequestInit
  std::thread answerer([&] { rig.wire->AnswerHeld(OkResponse()); });
  std::vector<Kind> kinds;
  while (std::optional<TapEvent> e = sub->Next(absl::Seconds(30))) {
    kinds.push_back(e->kind);
  }
  answerer.join();
  EXPECT_THAT(kinds, ElementsAre(Kind::kResponseInit, Kind::kResponseEnd));
  EXPECT_TRUE(sub->done());
}

TEST(TapTest, ConcurrentRequestsNeverExceedTheLimit) {
  Rig rig;
  TapOptions options = Everything(50);
  options.buffer = 10000;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(options);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) rig.Send();
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<TapEvent> events = Drain(*sub);
  EXPECT_EQ(events.size(), 150u);
  std::set<uint64_t> streams;
  for (const TapEvent& e : events) {
    if (e.kind == Kind::kRequestInit) streams.insert(e.stream);
  }
  EXPECT_EQ(streams.size(), 50u);
  EXPECT_EQ(*streams.rbegin(), 49u);
  EXPECT_TRUE(sub->done());
  EXPECT_EQ(rig.completed.load(), 400);
}

TEST(TapTest, ConcurrentRequestsAnsweredFromAnotherThreadWithAReader) {
  Rig rig;
  rig.wire->hold = true;
  TapOptions options = Everything(200);
  options.buffer = 10000;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(options);
  std::atomic<bool> stop{false};
  std::thread answerer([&] {
    while (!stop.load()) rig.wire->AnswerHeld(OkResponse());
    rig.wire->AnswerHeld(OkResponse());
  });
  std::vector<TapEvent> events;
  std::thread reader([&] {
    while (std::optional<TapEvent> e = sub->Next(absl::Seconds(60))) {
      events.push_back(*std::move(e));
    }
  });
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&] {
      for (int i = 0; i < 100; ++i) rig.Send();
    });
  }
  for (std::thread& t : senders) t.join();
  stop.store(true);
  answerer.join();
  reader.join();  // returns once the 200 tapped exchanges ended
  EXPECT_EQ(events.size(), 600u);
  EXPECT_TRUE(sub->done());
  EXPECT_EQ(rig.completed.load(), 400);
}

TEST(TapTest, SensitiveAndExtraHeadersAreRedactedEverywhere) {
  Rig rig({"X-Api-Key"});
  TapOptions options = Everything();
  options.extract_headers = true;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(options);
  TransportRequest request = GetBook();
  request.headers = {{"authorization", "Bearer secret"},
                     {"proxy-authorization", "Basic secret"},
                     {"cookie", "session=secret"},
                     {"x-api-key", "secret"},
                     {"x-request-id", "r1"}};
  TransportResponse response = OkResponse();
  response.headers = {{"set-cookie", "session=secret"},
                      {"x-api-key", "secret"},
                      {"content-type", "application/grpc"}};
  response.trailers = {{"cookie", "secret"},
                       {"authorization", "secret"},
                       {"x-api-key", "secret"},
                       {"x-trace", "t1"}};
  rig.wire->answer = response;
  rig.Send(request);

  std::vector<TapEvent> events = Drain(*sub);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_THAT(
      events[0].headers,
      ElementsAre(Pair(":method", "POST"), Pair(":scheme", "http"),
                  Pair(":authority", "books.default.svc:7001"),
                  Pair(":path", "/books.Library/GetBook"),
                  Pair("authorization", kTapRedacted),
                  Pair("proxy-authorization", kTapRedacted),
                  Pair("cookie", kTapRedacted), Pair("x-api-key", kTapRedacted),
                  Pair("x-request-id", "r1")));
  EXPECT_THAT(
      events[1].headers,
      ElementsAre(Pair(":status", "200"), Pair("set-cookie", kTapRedacted),
                  Pair("x-api-key", kTapRedacted),
                  Pair("content-type", "application/grpc")));
  EXPECT_THAT(
      events[2].trailers,
      ElementsAre(Pair("cookie", kTapRedacted),
                  Pair("authorization", kTapRedacted),
                  Pair("x-api-key", kTapRedacted), Pair("x-trace", "t1")));
  for (const TapEvent& e : events) {
    for (const Metadata* m : {&e.headers, &e.trailers}) {
      for (const auto& [name, value] : *m) {
        EXPECT_EQ(value.find("secret"), std::string::npos) << name;
      }
    }
  }
}

TEST(TapTest, NoHeadersWithoutExtractHeaders) {
  Rig rig;
  std::unique_ptr<TapSubscription> plain = rig.Subscribe(Everything());
  TapOptions extract = Everything();
  extract.extract_headers = true;
  std::unique_ptr<TapSubscription> with_headers = rig.Subscribe(extract);
  rig.Send();
  std::vector<TapEvent> events = Drain(*plain);
  ASSERT_EQ(events.size(), 3u);
  for (const TapEvent& e : events) {
    EXPECT_TRUE(e.headers.empty());
    EXPECT_TRUE(e.trailers.empty());
  }
  events = Drain(*with_headers);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_FALSE(events[0].headers.empty());
  EXPECT_FALSE(events[1].headers.empty());
  EXPECT_THAT(events[2].trailers, ElementsAre(Pair("x-trace", "t1")));
}

TEST(TapTest, AReaderThatNeverReadsLosesEventsNotRequests) {
  Rig rig;
  TapOptions options = Everything(1000);
  options.buffer = 8;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(options);
  for (int i = 0; i < 100; ++i) rig.Send();
  EXPECT_EQ(rig.completed.load(), 100);
  EXPECT_EQ(sub->dropped(), 3u * 100 - 8);
  std::vector<TapEvent> held = Drain(*sub);
  EXPECT_EQ(held.size(), 8u);
  EXPECT_EQ(sub->dropped() + held.size(), 300u);  // every emitted event
}

// Linkerd's rule: a subscriber that does not read costs a request a
// try-send into its full buffer. A hundred of them, matching every request:
// each keeps exactly its buffer, drops and counts every later event, the
// requests all complete, and a subscription whose limit ends while its
// buffer is full still ends once its reader drains it.
TEST(TapTest, SubscribersThatNeverReadKeepTheirBufferAndCountTheRest) {
  Rig rig;
  std::vector<std::unique_ptr<TapSubscription>> idle;
  for (int i = 0; i < 100; ++i) {
    TapOptions options = Everything(i == 0 ? 50 : 1000000);
    options.buffer = 10;
    idle.push_back(rig.Subscribe(options));
  }
  const int kRequests = 200;
  for (int i = 0; i < kRequests; ++i) rig.Send();
  EXPECT_EQ(rig.completed.load(), kRequests);
  for (size_t i = 1; i < idle.size(); ++i) {
    EXPECT_EQ(idle[i]->dropped(), 3u * kRequests - 10) << i;
    EXPECT_FALSE(idle[i]->done());
  }
  // The first one's limit (50) ended while its buffer was full: the last
  // events of its last exchanges were dropped, and it is done once read.
  EXPECT_EQ(idle[0]->dropped(), 3u * 50 - 10);
  EXPECT_FALSE(idle[0]->done());
  EXPECT_EQ(Drain(*idle[0]).size(), 10u);
  EXPECT_TRUE(idle[0]->done());
  EXPECT_EQ(Drain(*idle[1]).size(), 10u);
}

// The live subscriptions' matches together are bounded too (by
// kTapMaxTotalMatchNodes; lowered here): one past it is refused
// RESOURCE_EXHAUSTED naming the bound, until another ends.
TEST(TapTest, TheLiveMatchesTogetherAreBoundedNamingTheBound) {
  auto hub = std::make_shared<TapHub>(std::vector<std::string>{}, nullptr,
                                      /*max_subscriptions=*/100,
                                      /*identity_in_use=*/false,
                                      /*default_transport=*/true,
                                      /*max_match_nodes=*/10);
  TapOptions four;
  four.match = TapMatch::Any({TapMatch::Method("GET"), TapMatch::Method("PUT"),
                              TapMatch::Method("POST")});
  auto a = hub->Subscribe(four);
  auto b = hub->Subscribe(four);
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<std::unique_ptr<TapSubscription>> c = hub->Subscribe(four);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(c.status().message()),
              ::testing::HasSubstr("matches have 8 nodes and this one 4; "
                                   "together they may have at most 10 "
                                   "(kTapMaxTotalMatchNodes)"));
  TapOptions two;
  two.match = TapMatch::Not(TapMatch::Method("GET"));
  auto d = hub->Subscribe(two);
  EXPECT_TRUE(d.ok()) << d.status();
  d->reset();
  a->reset();
  EXPECT_TRUE(hub->Subscribe(four).ok());
}

TEST(TapTest, UnsubscribingWithExchangesInFlightIsSafe) {
  Rig rig;
  rig.wire->hold = true;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything());
  rig.Send();
  rig.Send();
  ASSERT_TRUE(rig.hub->active());
  sub.reset();
  EXPECT_FALSE(rig.hub->active());
  rig.Send();  // after: not tapped, forwarded
  // The hub and the transport go too; the calls are still held.
  rig.transport.reset();
  rig.hub.reset();
  EXPECT_EQ(rig.wire->AnswerHeld(OkResponse()), 3u);
  EXPECT_EQ(rig.completed.load(), 3);
}

TEST(TapTest, AnExchangeWhoseCallbackIsDroppedEndsAsACancelReset) {
  Rig rig;
  rig.wire->hold = true;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything(1));
  rig.Send();
  {
    std::lock_guard<std::mutex> lock(rig.wire->mu);
    rig.wire->held.clear();  // a transport that lost the call
  }
  std::vector<TapEvent> events = Drain(*sub);
  ASSERT_THAT(
      Kinds(events),
      ElementsAre(Kind::kRequestInit, Kind::kResponseInit, Kind::kResponseEnd));
  EXPECT_EQ(events[2].reset_error_code, 8u);
  EXPECT_TRUE(sub->done());
  EXPECT_EQ(rig.completed.load(), 0);
}

void ExpectSameRequest(const TransportRequest& got,
                       const TransportRequest& want) {
  EXPECT_EQ(got.method, want.method);
  EXPECT_EQ(got.scheme, want.scheme);
  EXPECT_EQ(got.authority, want.authority);
  EXPECT_EQ(got.path, want.path);
  EXPECT_EQ(got.headers, want.headers);
  EXPECT_EQ(got.body, want.body);
  EXPECT_EQ(got.deadline, want.deadline);
  EXPECT_EQ(got.route_labels, want.route_labels);
}

TEST(TapTest, UntappedRequestsReachTheInnerTransportUnchanged) {
  Rig rig;
  TransportRequest want = GetBook();
  want.deadline = absl::FromUnixSeconds(1234567);
  want.route_labels = &rig.route_labels;
  TransportResponse answer = OkResponse();
  answer.status = absl::NotFoundError("no such book");
  rig.wire->answer = answer;

  std::optional<TransportResponse> got;
  auto send = [&] {
    rig.transport->Send(rig.endpoint, want,
                        [&](TransportResponse r) { got = std::move(r); });
  };
  send();  // no subscriber
  TapOptions rejecting;
  rejecting.match = TapMatch::Method("GET");
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(rejecting);
  send();  // a subscriber whose match rejects the request
  ASSERT_EQ(rig.wire->requests.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ExpectSameRequest(rig.wire->requests[i], want);
    EXPECT_EQ(rig.wire->endpoints[i], &rig.endpoint);
  }
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, answer.status);
  EXPECT_EQ(got->body, answer.body);
  EXPECT_EQ(got->trailers, answer.trailers);
  EXPECT_FALSE(sub->Next(absl::ZeroDuration()).has_value());
}

TEST(TapTest, TappedRequestsReachTheInnerTransportUnchangedToo) {
  Rig rig;
  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything());
  TransportRequest want = GetBook();
  want.route_labels = &rig.route_labels;
  std::optional<TransportResponse> got;
  rig.transport->Send(rig.endpoint, want,
                      [&](TransportResponse r) { got = std::move(r); });
  ASSERT_EQ(rig.wire->requests.size(), 1u);
  ExpectSameRequest(rig.wire->requests[0], want);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->body, OkResponse().body);
}

TEST(TapTest, InvalidOptionsAreRefusedAndLeaveTheHubInactive) {
  Rig rig;
  TapOptions options = Everything(0);
  absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
      rig.hub->Subscribe(options);
  EXPECT_EQ(sub.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(rig.hub->active());
}

TEST(TapTest, RetainOnlyAndShutdownReachTheInnerTransport) {
  Rig rig;
  rig.transport->RetainOnly({"10.1.2.3:7001"});
  rig.transport->Shutdown();
  EXPECT_EQ(rig.wire->retain_only_calls, 1);
  EXPECT_EQ(rig.wire->shutdown_calls, 1);
}

// A destination sends through TapSwitch: the inner transport while nobody
// taps, the hook (and so the subscription's events) while someone does.
TEST(TapTest, TapSwitchTakesTheHookOnlyWhileASubscriptionIsLive) {
  Rig rig;
  TapSwitch transports(std::make_unique<FakeTransport>(rig.wire), rig.hub);
  auto send = [&] {
    TransportRequest request = GetBook();
    request.route_labels = &rig.route_labels;
    transports.ForRequest().Send(
        rig.endpoint, std::move(request),
        [&rig](TransportResponse) { rig.completed.fetch_add(1); });
  };
  EXPECT_NE(&transports.ForRequest(), &transports.All());
  send();

  std::unique_ptr<TapSubscription> sub = rig.Subscribe(Everything());
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(&transports.ForRequest(), &transports.All());
  send();
  EXPECT_THAT(
      Kinds(Drain(*sub)),
      ElementsAre(Kind::kRequestInit, Kind::kResponseInit, Kind::kResponseEnd));

  sub.reset();
  EXPECT_NE(&transports.ForRequest(), &transports.All());
  send();
  EXPECT_EQ(rig.completed.load(), 3);
  EXPECT_EQ(rig.wire->requests.size(), 3u);
  transports.All().Shutdown();
  EXPECT_EQ(rig.wire->shutdown_calls, 1);
}

TEST(TapResponseTest, StatusAndResetMapping) {
  TransportResponse r;
  r.status = absl::CancelledError("shutdown");
  TapResponse t = TapResponseOf(r);
  EXPECT_EQ(t.http_status, 0u);
  EXPECT_EQ(t.reset_error_code, 8u);
  EXPECT_FALSE(t.grpc_status.has_value());

  r.status = absl::UnavailableError("connect failed");
  r.never_sent = true;
  EXPECT_EQ(TapResponseOf(r).reset_error_code, 7u);
  r.never_sent = false;
  EXPECT_EQ(TapResponseOf(r).reset_error_code, 2u);

  r.http_status = 200;  // the server answered UNAVAILABLE itself
  t = TapResponseOf(r);
  EXPECT_EQ(t.http_status, 200u);
  EXPECT_FALSE(t.reset_error_code.has_value());
  EXPECT_EQ(t.grpc_status, 14u);

  r = TransportResponse();
  r.status = absl::DeadlineExceededError("late");
  t = TapResponseOf(r);
  EXPECT_EQ(t.http_status, 0u);
  EXPECT_EQ(t.grpc_status, 4u);

  r = TransportResponse();  // OK, no http_status: an answer, so 200
  r.body = "abc";
  t = TapResponseOf(r);
  EXPECT_EQ(t.http_status, 200u);
  EXPECT_EQ(t.grpc_status, 0u);
  EXPECT_EQ(t.response_bytes, 3u);

  r.trailers = {{"grpc-status", "5"}};  // the trailer wins
  EXPECT_EQ(TapResponseOf(r).grpc_status, 5u);
  r.trailers.clear();
  r.headers = {{"grpc-status", "7"}};  // trailers-only
  EXPECT_EQ(TapResponseOf(r).grpc_status, 7u);
}

}  // namespace
}  // namespace mesh::internal
