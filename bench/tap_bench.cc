// Per-request cost of the tap hook (src/tap/tap_transport.h) around a no-op
// Transport that answers inline (an InlineTransport,
// tests/support/fake_transports.h): the bare inner call, a decorator that
// only forwards, a destination's request path with no subscriber
// (TapSwitch, goal: within 5 ns of bare) and the hook itself with none, with
// one subscriber whose match rejects the request (goal: 100 ns), and with one
// matching subscriber whose events a reader thread drains (goal: 1 µs).
//
//   mesh_micro_bench --benchmark_filter=BM_Tap
//
// The request is moved into the transport and moved back by the no-op
// inner one, so the loop allocates nothing of its own.
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "benchmark/benchmark.h"
#include "mesh/tap.h"
#include "mesh/transport.h"
#include "src/tap/tap_hub.h"
#include "src/tap/tap_transport.h"
#include "tests/support/fake_transports.h"

namespace mesh::internal {
namespace {

using ::mesh::testing::InlineTransport;
using ::mesh::testing::NewInlineTransport;

// For an InlineTransport: answers every request with an empty OK response
// and hands the request back to `*home` for the next iteration.
struct HandBack {
  TransportResponse operator()(TransportRequest& request) const {
    *home = std::move(request);
    return TransportResponse();
  }
  TransportRequest* home;
};

struct Setup {
  Setup() {
    request.authority = "books.default.svc.cluster.local:7001";
    request.path = "/books.Library/GetBook";
    request.headers = {{"content-type", "application/grpc"},
                       {"authorization", "Bearer x"}};
    request.body = std::string(64, 'x');
    request.route_labels = &route_labels;
    endpoint.labels = {{"pod", "books-1"}, {"zone", "a"}};
  }

  // Through an opaque pointer, as a caller holding a Transport would: the
  // compiler must not devirtualize the bare call. (A volatile rather than
  // benchmark::DoNotOptimize(T&), whose "+m,r" constraint GCC 12 miscompiles
  // here.)
  void Run(benchmark::State& state, Transport* t) {
    Transport* volatile opaque = t;
    Transport* transport = opaque;
    RunChoosing(state, [transport]() -> Transport& { return *transport; });
  }

  // `choose()` gives the transport of each request.
  template <typename Choose>
  void RunChoosing(benchmark::State& state, Choose choose) {
    int64_t answered = 0;
    for (auto _ : state) {
      choose().Send(endpoint, std::move(request),
                    [&answered](TransportResponse) { ++answered; });
    }
    if (answered != state.iterations()) state.SkipWithError("lost callbacks");
  }

  TransportRequest request;
  Endpoint endpoint{"10.1.2.3:7001"};
  std::map<std::string, std::string> route_labels = {{"route", "GetBook"}};
};

void BM_TapBareInner(benchmark::State& state) {
  Setup setup;
  InlineTransport<HandBack> inner(HandBack{&setup.request});
  setup.Run(state, &inner);
}
BENCHMARK(BM_TapBareInner);

// A decorator that only forwards: what any Transport decorator pays for
// passing the request and callback on by value through a second virtual
// call. The tap hook's own cost with no subscriber is its excess over this.
class ForwardingTransport final : public Transport {
 public:
  explicit ForwardingTransport(std::unique_ptr<Transport> inner)
      : inner_(std::move(inner)) {}
  void Send(const Endpoint& endpoint, TransportRequest request,
            Callback done) override {
    inner_->Send(endpoint, std::move(request), std::move(done));
  }

 private:
  std::unique_ptr<Transport> inner_;
};

void BM_TapForwardOnlyDecorator(benchmark::State& state) {
  Setup setup;
  ForwardingTransport forward(NewInlineTransport(HandBack{&setup.request}));
  setup.Run(state, &forward);
}
BENCHMARK(BM_TapForwardOnlyDecorator);

// What a destination pays per request while nobody taps: TapSwitch picks
// the inner transport (goal: within 5 ns of the bare call).
void BM_TapNoSubscriber(benchmark::State& state) {
  Setup setup;
  TapSwitch transports(NewInlineTransport(HandBack{&setup.request}),
                       std::make_shared<TapHub>());
  setup.RunChoosing(state,
                    [&]() -> Transport& { return transports.ForRequest(); });
}
BENCHMARK(BM_TapNoSubscriber);

// The hook itself with no subscriber, for reference: the decorator's
// check and forward.
void BM_TapHookNoSubscriber(benchmark::State& state) {
  Setup setup;
  auto hub = std::make_shared<TapHub>();
  std::unique_ptr<Transport> tap =
      NewTapTransport(NewInlineTransport(HandBack{&setup.request}), hub);
  setup.Run(state, tap.get());
}
BENCHMARK(BM_TapHookNoSubscriber);

// match=0: a path prefix that differs; match=1: a destination net the
// endpoint is not in (parses the address); match=2: a tree of four leaves
// that all look at the request.
void BM_TapRejectingSubscriber(benchmark::State& state) {
  Setup setup;
  auto hub = std::make_shared<TapHub>();
  std::unique_ptr<Transport> tap =
      NewTapTransport(NewInlineTransport(HandBack{&setup.request}), hub);
  TapOptions options;
  switch (state.range(0)) {
    case 0:
      options.match = TapMatch::PathPrefix("/authors.");
      break;
    case 1:
      options.match = TapMatch::DestinationNet("192.168.0.0/16");
      break;
    default:
      options.match = TapMatch::All(
          {TapMatch::AuthorityPrefix("books."), TapMatch::Method("POST"),
           TapMatch::DestinationPorts(7000, 7999),
           TapMatch::RouteLabel("route", "ListBooks")});
  }
  auto sub = hub->Subscribe(options);
  if (!sub.ok()) state.SkipWithError("subscribe failed");
  setup.Run(state, tap.get());
}
BENCHMARK(BM_TapRejectingSubscriber)->ArgName("match")->Arg(0)->Arg(1)->Arg(2);

// One subscriber that takes every request (limit ~unbounded) while a reader
// thread pulls its events; headers=1 extracts headers too. "dropped" counts
// events the reader did not keep up with (cheaper than delivered ones).
void BM_TapMatchingSubscriber(benchmark::State& state) {
  Setup setup;
  auto hub = std::make_shared<TapHub>();
  std::unique_ptr<Transport> tap =
      NewTapTransport(NewInlineTransport(HandBack{&setup.request}), hub);
  TapOptions options;
  options.match = TapMatch::PathPrefix("/books.");
  options.limit = std::numeric_limits<uint32_t>::max();
  options.extract_headers = state.range(0) != 0;
  absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
      hub->Subscribe(options);
  if (!sub.ok()) {
    state.SkipWithError("subscribe failed");
    return;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> pulled{0};
  std::thread reader([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if ((*sub)->Next(absl::Milliseconds(5))) {
        pulled.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  setup.Run(state, tap.get());
  stop.store(true);
  reader.join();
  state.counters["dropped"] = static_cast<double>((*sub)->dropped());
  state.counters["pulled"] = static_cast<double>(pulled.load());
}
BENCHMARK(BM_TapMatchingSubscriber)->ArgName("headers")->Arg(0)->Arg(1);

}  // namespace
}  // namespace mesh::internal
