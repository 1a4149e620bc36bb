// Routing a call by a Linkerd policy (GRPCRoute rules from
// OutboundPolicies) against routing it by a service profile with the same
// number of rules, side by side in one run: the route match and the
// split's draw, from the converted configs compiled by the route table.
// And what applying a policy costs: conversion plus compiling its table.
#include <memory>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "linkerd/destination.pb.h"
#include "linkerd/outbound.pb.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/linkerd/convert_policy.h"
#include "src/route/route_table.h"
#include "src/route/traffic_split.h"

namespace mesh::internal::linkerd {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace out = ::io::linkerd::proxy::outbound;

std::string Method(int i) { return absl::StrCat("Method", i); }

// A profile of `rules` gRPC-method routes (a literal path regex each, as
// Linkerd's generated profiles write them) and a 90/10 split.
dst::DestinationProfile ProfileOf(int rules) {
  dst::DestinationProfile p;
  for (int i = 0; i < rules; ++i) {
    dst::Route* r = p.add_routes();
    r->mutable_condition()->mutable_path()->set_regex(
        absl::StrCat("/books\\.Library/", Method(i)));
    (*r->mutable_metrics_labels())["route"] = Method(i);
  }
  for (const char* path : {"books-v1.ns:8080", "books-v2.ns:8080"}) {
    dst::WeightedDst* d = p.add_dst_overrides();
    d->set_authority(path);
    d->set_weight(path[6] == '1' ? 9000 : 1000);
  }
  return p;
}

// A policy of one GRPCRoute with `rules` rules, each matching one method
// and splitting 90/10.
out::OutboundPolicy PolicyOf(int rules) {
  out::OutboundPolicy p;
  p.mutable_metadata()->set_default_("books");
  out::GrpcRoute* route = p.mutable_protocol()->mutable_grpc()->add_routes();
  route->mutable_metadata()->mutable_resource()->set_name("books");
  for (int i = 0; i < rules; ++i) {
    out::GrpcRoute::Rule* rule = route->add_rules();
    auto* rpc = rule->add_matches()->mutable_rpc();
    rpc->set_service("books.Library");
    rpc->set_method(Method(i));
    auto* split = rule->mutable_backends()->mutable_random_available();
    for (const char* path : {"books-v1.ns:8080", "books-v2.ns:8080"}) {
      auto* b = split->add_backends();
      b->set_weight(path[6] == '1' ? 90 : 10);
      b->mutable_backend()
          ->mutable_backend()
          ->mutable_balancer()
          ->mutable_discovery()
          ->mutable_dst()
          ->set_path(path);
    }
  }
  return p;
}

// Arg 0: rules. The call matches the last rule's method (the profile's
// worst case: its routes are tried in order, or looked up past 8).
void BM_ProfileRouteAndSplit(benchmark::State& state) {
  const int rules = static_cast<int>(state.range(0));
  ServiceConfig config = ConvertProfile(ProfileOf(rules)).config;
  auto table = RouteTable::Build(config, nullptr);
  auto split = TrafficSplit::Build(config.backends, nullptr);
  const std::string path = absl::StrCat("/books.Library/", Method(rules - 1));
  absl::InsecureBitGen gen;
  for (auto _ : state) {
    const CompiledRoute& r = table->Match({"POST", path, nullptr});
    const TrafficSplit& s = r.split != nullptr ? *r.split : *split;
    benchmark::DoNotOptimize(s.Draw(gen, 0));
  }
}
BENCHMARK(BM_ProfileRouteAndSplit)->ArgName("rules")->Arg(1)->Arg(10)->Arg(100);

void BM_PolicyRouteAndSplit(benchmark::State& state) {
  const int rules = static_cast<int>(state.range(0));
  absl::StatusOr<PolicyConversion> p =
      ConvertPolicy(PolicyOf(rules), "books.ns:8080");
  if (!p.ok() || p->config.routes.size() != static_cast<size_t>(rules)) {
    state.SkipWithError("the policy did not convert");
    return;
  }
  auto table = RouteTable::Build(p->config, nullptr);
  const std::string path = absl::StrCat("/books.Library/", Method(rules - 1));
  absl::InsecureBitGen gen;
  for (auto _ : state) {
    const CompiledRoute& r = table->Match({"POST", path, nullptr});
    benchmark::DoNotOptimize(r.split->Draw(gen, 0));
  }
}
BENCHMARK(BM_PolicyRouteAndSplit)->ArgName("rules")->Arg(1)->Arg(10)->Arg(100);

// A policy update applied: parsed from its bytes, converted, its route
// table compiled (what the discovery thread does before calls see it).
void BM_PolicyApply(benchmark::State& state) {
  const std::string bytes =
      PolicyOf(static_cast<int>(state.range(0))).SerializeAsString();
  for (auto _ : state) {
    out::OutboundPolicy wire;
    wire.ParseFromString(bytes);
    absl::StatusOr<PolicyConversion> p = ConvertPolicy(wire, "books.ns:8080");
    auto table = RouteTable::Build(p->config, nullptr);
    benchmark::DoNotOptimize(table.get());
  }
}
BENCHMARK(BM_PolicyApply)
    ->ArgName("rules")
    ->Arg(100)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mesh::internal::linkerd
