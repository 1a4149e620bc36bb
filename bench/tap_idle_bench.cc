// mesh_tap_idle_bench: what tap subscribers that never read cost each
// request (issue 29): the tap hook's Start and Finish of one request (its
// RequestInit, ResponseInit and ResponseEnd to every claiming
// subscription) around a no-op inline Transport, with 0, 1, 10 and 100
// subscriptions that match every request and whose buffers are full.
// Linkerd's rule: a subscriber that does not read costs a request a
// try-send into its full buffer, nothing more. Goal: 100 of them within
// 1.5× of none on a whole call (docs/benchmarks.md, section 6); here the
// hook alone, whose excess over `subs:0` is what they add to a call.
//
//   mesh_tap_idle_bench --benchmark_filter=BM_TapIdleSubscribers
//
// Also under callgrind, whose instruction counts do not swing with the
// machine's load:
//   valgrind --tool=callgrind mesh_tap_idle_bench
//     --benchmark_filter='BM_TapIdleSubscribers/subs:100'
//     --benchmark_min_time=0.01
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "mesh/tap.h"
#include "mesh/transport.h"
#include "src/tap/tap_hub.h"
#include "src/tap/tap_transport.h"
#include "tests/support/fake_transports.h"

namespace mesh::internal {
namespace {

// Answers with an empty OK response and hands the request back to `*home`
// for the next iteration: the loop allocates nothing of its own.
struct HandBack {
  TransportResponse operator()(TransportRequest& request) const {
    *home = std::move(request);
    TransportResponse response;
    response.http_status = 200;
    return response;
  }
  TransportRequest* home;
};

void BM_TapIdleSubscribers(benchmark::State& state) {
  const int subscribers = static_cast<int>(state.range(0));
  TransportRequest request;
  request.method = "POST";
  request.scheme = "http";
  request.authority = "books.default.svc.cluster.local:7001";
  request.path = "/books.Library/GetBook";
  request.headers = {{"content-type", "application/grpc"}};
  request.body = std::string(64, 'x');
  std::map<std::string, std::string> route_labels = {{"route", "GetBook"}};
  request.route_labels = &route_labels;
  Endpoint endpoint{"10.1.2.3:7001"};
  endpoint.labels = {{"pod", "books-1"}, {"zone", "a"}};

  auto hub = std::make_shared<TapHub>(std::vector<std::string>{}, nullptr,
                                      /*max_subscriptions=*/1000);
  std::unique_ptr<Transport> tap =
      NewTapTransport(testing::NewInlineTransport(HandBack{&request}), hub);
  std::vector<std::unique_ptr<TapSubscription>> idle;
  for (int i = 0; i < subscribers; ++i) {
    TapOptions options;
    options.match = TapMatch::All({});
    options.limit = std::numeric_limits<uint32_t>::max();
    absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
        hub->Subscribe(options);
    if (!sub.ok()) {
      state.SkipWithError("subscribe failed");
      return;
    }
    idle.push_back(*std::move(sub));
  }
  // Fill every buffer first: what is measured is the steady state of a
  // subscriber that stopped reading long ago.
  const size_t fill = TapOptions().buffer / 3 + 1;
  for (size_t i = 0; i < fill; ++i) {
    tap->Send(endpoint, std::move(request), [](TransportResponse) {});
  }
  Transport* volatile opaque = tap.get();
  int64_t answered = 0;
  for (auto _ : state) {
    opaque->Send(endpoint, std::move(request),
                 [&answered](TransportResponse) { ++answered; });
  }
  if (answered != state.iterations()) state.SkipWithError("lost callbacks");
  uint64_t dropped = 0;
  for (const auto& sub : idle) dropped += sub->dropped();
  state.counters["dropped/req"] = benchmark::Counter(
      static_cast<double>(dropped) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_TapIdleSubscribers)
    ->ArgName("subs")
    ->Arg(0)
    ->Arg(1)
    ->Arg(10)
    ->Arg(100);

}  // namespace
}  // namespace mesh::internal

BENCHMARK_MAIN();
