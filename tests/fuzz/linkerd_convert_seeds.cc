// Writes a seed corpus for linkerd_convert_fuzz: realistic Destination API
// messages (and a few broken ones) in the fuzzer's input format, a selector
// byte (0: Update, 1: DestinationProfile, 2: OutboundPolicy) then the
// serialized message. Seeds
// are generated rather than checked in so they follow the .proto files.
//
//   linkerd_convert_seeds OUT_DIR
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "linkerd/destination.pb.h"
#include "linkerd/outbound.pb.h"

namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace http = ::io::linkerd::proxy::http_types;

int written = 0;

bool Write(const std::string& dir, char selector,
           const google::protobuf::Message& m) {
  std::string path = dir + "/seed-" + std::to_string(written++);
  std::ofstream out(path, std::ios::binary);
  out << selector << m.SerializeAsString();
  return static_cast<bool>(out);
}

dst::WeightedAddr Addr(uint32_t ipv4, uint32_t port, uint32_t weight) {
  dst::WeightedAddr a;
  a.mutable_addr()->mutable_ip()->set_ipv4(ipv4);
  a.mutable_addr()->set_port(port);
  a.set_weight(weight);
  return a;
}

std::vector<dst::Update> Updates() {
  std::vector<dst::Update> out;
  dst::Update add;
  dst::WeightedAddrSet* set = add.mutable_add();
  (*set->mutable_metric_labels())["namespace"] = "default";
  dst::WeightedAddr* a = set->add_addrs();
  *a = Addr(0x0A000001, 7001, 10000);
  (*a->mutable_metric_labels())["pod"] = "books-1";
  a->mutable_tls_identity()->mutable_dns_like_identity()->set_name(
      "books.default.serviceaccount.identity.linkerd.cluster.local");
  a->mutable_protocol_hint()->mutable_h2();
  a->mutable_authority_override()->set_authority_override("books:7001");
  dst::WeightedAddr* b = set->add_addrs();
  b->mutable_addr()->mutable_ip()->mutable_ipv6()->set_first(
      0x20010DB800000000);
  b->mutable_addr()->mutable_ip()->mutable_ipv6()->set_last(1);
  b->mutable_addr()->set_port(7001);
  b->mutable_tls_identity()->mutable_uri_like_identity()->set_uri(
      "spiffe://cluster.local/ns/default/sa/books");
  b->mutable_protocol_hint()->mutable_opaque();
  out.push_back(add);

  dst::Update dup;
  *dup.mutable_add()->add_addrs() = Addr(0x0A000001, 80, 1);
  *dup.mutable_add()->add_addrs() = Addr(0x0A000001, 80, 0);
  out.push_back(dup);

  dst::Update bad_port;
  *bad_port.mutable_add()->add_addrs() = Addr(0x0A000001, 0, 1);
  out.push_back(bad_port);

  dst::Update remove;
  *remove.mutable_remove()->add_addrs() = Addr(0x0A000001, 7001, 0).addr();
  remove.mutable_remove()->add_addrs()->set_port(80);  // no ip
  out.push_back(remove);

  dst::Update none;
  none.mutable_no_endpoints()->set_exists(true);
  out.push_back(none);
  out.push_back(dst::Update());
  return out;
}

std::vector<dst::DestinationProfile> Profiles() {
  std::vector<dst::DestinationProfile> out;
  dst::DestinationProfile p;
  p.set_fully_qualified_name("books.default.svc.cluster.local");
  p.mutable_retry_budget()->set_retry_ratio(0.2f);
  p.mutable_retry_budget()->set_min_retries_per_second(10);
  p.mutable_retry_budget()->mutable_ttl()->set_seconds(10);
  out.push_back(p);  // the controller's default

  dst::Route* r = p.add_routes();
  dst::RequestMatch::Seq* all = r->mutable_condition()->mutable_all();
  all->add_matches()->mutable_path()->set_regex("/books.Library/Get[A-Z].*");
  all->add_matches()->mutable_method()->set_registered(http::HttpMethod::POST);
  dst::RequestMatch::Seq* any =
      all->add_matches()->mutable_not_()->mutable_any();
  any->add_matches()->mutable_method()->set_unregistered("PURGE");
  dst::ResponseClass* c = r->add_response_classes();
  dst::ResponseMatch::Seq* range = c->mutable_condition()->mutable_any();
  range->add_matches()->mutable_status()->set_min(500);
  range->add_matches()->mutable_status()->set_max(599);
  range->add_matches()->mutable_not_()->mutable_status()->set_min(200);
  c->set_is_failure(true);
  (*r->mutable_metrics_labels())["route"] = "GetBook";
  r->set_is_retryable(true);
  r->mutable_timeout()->set_nanos(300'000'000);
  dst::Route* broken = p.add_routes();
  broken->mutable_condition()->mutable_path()->set_regex("(a)\\1");
  broken->mutable_timeout()->set_seconds(-1);
  p.add_routes();  // no condition
  dst::WeightedDst* d = p.add_dst_overrides();
  d->set_authority("books-v2.default.svc.cluster.local:7001");
  d->set_weight(9000);
  p.add_dst_overrides()->set_authority("books");
  *p.mutable_endpoint() = Addr(0x7F000001, 4143, 1);
  p.set_opaque_protocol(true);
  out.push_back(p);
  return out;
}

}  // namespace

// Policies in text: an HTTP one with each match kind, filters, retries and
// a split, and a gRPC one.
std::vector<io::linkerd::proxy::outbound::OutboundPolicy> Policies() {
  const char* texts[] = {
      "metadata { resource { kind: 'Service' namespace: 'ns' name: 'books' "
      "} } protocol { http2 { routes { metadata { resource { kind: "
      "'HTTPRoute' namespace: 'ns' name: 'r' } } hosts { exact: 'books.ns' } "
      "hosts { suffix { reverse_labels: 'ns' } } rules { matches { path { "
      "prefix: '/books' } headers { name: 'x' exact: '1' } query_params { "
      "name: 'page' regex: '[0-9]+' } method { registered: GET } } matches { "
      "path { regex: '/a/.*' } } filters { failure_injector { status: 503 "
      "ratio { numerator: 1 denominator: 10 } } } filters { redirect { host: "
      "'x' } } backends { random_available { backends { weight: 9 backend { "
      "backend { balancer { discovery { dst { path: 'a.ns:80' } } } } } } "
      "backends { weight: 1 backend { backend { balancer { discovery { dst { "
      "path: 'b.ns:80' } } } } } } } } timeouts { request { seconds: 1 } } "
      "retry { max_retries: 2 conditions { status_ranges { start: 500 end: "
      "599 } } backoff { min_backoff { nanos: 1000000 } max_backoff { "
      "seconds: 1 } } } } } } }",
      "metadata { default: 'grpc' } protocol { grpc { routes { metadata { "
      "default: 'r' } rules { matches { rpc { service: 'books.Library' "
      "method: 'GetBook' } headers { name: 'x' regex: '.+' } } backends { "
      "first_available { backends { backend { balancer { discovery { dst { "
      "path: 'a.ns:80' } } } } } } } retry { max_retries: 1 conditions { "
      "unavailable: true } } filters { failure_injector { code: 14 } } } } } "
      "}",
      "protocol { opaque { } }",
  };
  std::vector<io::linkerd::proxy::outbound::OutboundPolicy> out;
  for (const char* text : texts) {
    io::linkerd::proxy::outbound::OutboundPolicy p;
    if (google::protobuf::TextFormat::ParseFromString(text, &p)) {
      out.push_back(p);
    } else {
      std::fprintf(stderr, "seed policy does not parse: %s\n", text);
      std::exit(1);
    }
  }
  return out;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  for (const dst::Update& u : Updates()) {
    if (!Write(argv[1], 0, u)) return 1;
  }
  for (const dst::DestinationProfile& p : Profiles()) {
    if (!Write(argv[1], 1, p)) return 1;
  }
  for (const auto& p : Policies()) {
    if (!Write(argv[1], 2, p)) return 1;
  }
  std::printf("wrote %d seeds to %s\n", written, argv[1]);
  return 0;
}
