// mesh-tap's flags and output: the line of each event kind, gRPC status
// names, JSON (and its escaping), flag errors, the ObserveRequest the flags
// ask for, and that request and the events through the server's own
// conversion (src/tap/observe_convert).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/tap/observe_convert.h"
#include "tools/mesh-tap/flags.h"
#include "tools/mesh-tap/format.h"

namespace mesh::tools {
namespace {

using ::testing::HasSubstr;

namespace wire = ::io::linkerd::proxy::tap;
namespace wire_http = ::io::linkerd::proxy::http_types;
using WireHttp = wire::TapEvent::Http;

wire::TapEvent Outbound() {
  wire::TapEvent e;
  e.mutable_destination()->mutable_ip()->set_ipv4(0x0A000001);
  e.mutable_destination()->set_port(7001);
  e.set_proxy_direction(wire::TapEvent::OUTBOUND);
  (*e.mutable_destination_meta()->mutable_labels())["zone"] = "a";
  (*e.mutable_destination_meta()->mutable_labels())["pod"] = "books-1";
  (*e.mutable_route_meta()->mutable_labels())["route"] = "GetBook";
  return e;
}

void SetId(WireHttp::StreamId* id) {
  id->set_base(3);
  id->set_stream(41);
}

wire::TapEvent Req() {
  wire::TapEvent e = Outbound();
  WireHttp::RequestInit* init = e.mutable_http()->mutable_request_init();
  SetId(init->mutable_id());
  init->mutable_method()->set_registered(wire_http::HttpMethod::POST);
  init->mutable_scheme()->set_registered(wire_http::Scheme::HTTP);
  init->set_authority("books:7001");
  init->set_path("/books.Library/GetBook");
  return e;
}

wire::TapEvent Rsp() {
  wire::TapEvent e = Outbound();
  WireHttp::ResponseInit* init = e.mutable_http()->mutable_response_init();
  SetId(init->mutable_id());
  init->mutable_since_request_init()->set_nanos(1234567);
  init->set_http_status(200);
  return e;
}

wire::TapEvent End() {
  wire::TapEvent e = Outbound();
  WireHttp::ResponseEnd* end = e.mutable_http()->mutable_response_end();
  SetId(end->mutable_id());
  end->mutable_since_request_init()->set_seconds(1);
  end->mutable_since_request_init()->set_nanos(300000);
  end->mutable_since_response_init()->set_nanos(66000);
  end->set_response_bytes(42);
  end->mutable_eos()->set_grpc_status_code(0);
  return e;
}

void AddHeader(wire_http::Headers* headers, const std::string& name,
               const std::string& value) {
  wire_http::Headers::Header* h = headers->add_headers();
  h->set_name(name);
  h->set_value(value);
}

constexpr char kCommon[] =
    "id=3:41 proxy=out src=- dst=10.0.0.1:7001 tls=false";

// --- lines -------------------------------------------------------------------

TEST(FormatEventLine, Request) {
  EXPECT_EQ(FormatEventLine(Req()), std::string("req ") + kCommon +
                                        " :method=POST :authority=books:7001"
                                        " :path=/books.Library/GetBook\n");
}

TEST(FormatEventLine, ARetryOrHedgeSaysWhichAttemptItIs) {
  wire::TapEvent e = Req();
  auto& labels = *e.mutable_route_meta()->mutable_labels();
  labels["attempt"] = "2";
  EXPECT_THAT(FormatEventLine(e),
              HasSubstr(" :path=/books.Library/GetBook attempt=2\n"));
  labels["hedge"] = "true";
  EXPECT_THAT(FormatEventLine(e),
              HasSubstr(" :path=/books.Library/GetBook attempt=2 hedge\n"));
}

TEST(FormatEventLine, Response) {
  EXPECT_EQ(FormatEventLine(Rsp()), std::string("rsp ") + kCommon +
                                        " :status=200 latency=1234\xc2\xb5s\n");
}

TEST(FormatEventLine, EndWithGrpcStatus) {
  EXPECT_EQ(FormatEventLine(End()),
            std::string("end ") + kCommon +
                " grpc-status=OK duration=66\xc2\xb5s response-length=42B\n");
  wire::TapEvent e = End();
  e.mutable_http()->mutable_response_end()->mutable_eos()->set_grpc_status_code(
      14);
  EXPECT_THAT(FormatEventLine(e), HasSubstr(" grpc-status=UNAVAILABLE "));
}

TEST(FormatEventLine, EndWithResetOrNothing) {
  wire::TapEvent e = End();
  e.mutable_http()->mutable_response_end()->mutable_eos()->set_reset_error_code(
      8);
  EXPECT_EQ(FormatEventLine(e),
            std::string("end ") + kCommon +
                " reset-error=8 duration=66\xc2\xb5s response-length=42B\n");
  e.mutable_http()->mutable_response_end()->clear_eos();
  EXPECT_EQ(FormatEventLine(e),
            std::string("end ") + kCommon +
                " duration=66\xc2\xb5s response-length=42B\n");
}

TEST(FormatEventLine, HeadersFollowIndented) {
  wire::TapEvent e = Req();
  auto* headers = e.mutable_http()->mutable_request_init()->mutable_headers();
  AddHeader(headers, ":method", "POST");
  AddHeader(headers, "authorization", "[redacted]");
  AddHeader(headers, "x-bin", std::string("a\0\n\xff", 4));
  EXPECT_THAT(FormatEventLine(e), HasSubstr(":path=/books.Library/GetBook\n"
                                            "  :method: POST\n"
                                            "  authorization: [redacted]\n"
                                            "  x-bin: a\\x00\\x0a\\xff\n"));

  e = End();
  AddHeader(e.mutable_http()->mutable_response_end()->mutable_trailers(),
            "grpc-status", "0");
  EXPECT_THAT(FormatEventLine(e), HasSubstr("B\n  grpc-status: 0\n"));
}

TEST(FormatEventLine, AddressesDirectionsAndOddValues) {
  wire::TapEvent e = Req();
  e.clear_destination();
  auto* v6 = e.mutable_source()->mutable_ip()->mutable_ipv6();
  v6->set_first(0xFD00000000000000ull);
  v6->set_last(1);
  e.mutable_source()->set_port(5000);
  e.set_proxy_direction(wire::TapEvent::INBOUND);
  (*e.mutable_source_meta()->mutable_labels())["tls"] = "true";
  auto* init = e.mutable_http()->mutable_request_init();
  init->mutable_method()->set_unregistered("PURGE");
  init->set_path("/a b\t");
  EXPECT_EQ(FormatEventLine(e),
            "req id=3:41 proxy=in src=[fd00::1]:5000 dst=- tls=true "
            ":method=PURGE :authority=books:7001 :path=/a b\\x09\n");

  e.set_proxy_direction(wire::TapEvent::UNKNOWN);
  init->clear_method();
  EXPECT_THAT(FormatEventLine(e), HasSubstr("proxy=- "));
  EXPECT_THAT(FormatEventLine(e), HasSubstr(":method=- "));
  EXPECT_EQ(FormatEventLine(wire::TapEvent()),
            "? id=- proxy=- src=- dst=- tls=false\n");
}

TEST(FormatTcpAddress, Forms) {
  io::linkerd::proxy::net::TcpAddress a;
  EXPECT_EQ(FormatTcpAddress(a), "-");
  a.mutable_ip();
  EXPECT_EQ(FormatTcpAddress(a), "-");
  a.mutable_ip()->set_ipv4(0xC0A80A81);
  a.set_port(80);
  EXPECT_EQ(FormatTcpAddress(a), "192.168.10.129:80");
  a.mutable_ip()->mutable_ipv6()->set_last(1);
  EXPECT_EQ(FormatTcpAddress(a), "[::1]:80");
}

TEST(GrpcStatusName, Names) {
  EXPECT_EQ(GrpcStatusName(0), "OK");
  EXPECT_EQ(GrpcStatusName(4), "DEADLINE_EXCEEDED");
  EXPECT_EQ(GrpcStatusName(5), "NOT_FOUND");
  EXPECT_EQ(GrpcStatusName(16), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcStatusName(17), "CODE_17");
  EXPECT_EQ(GrpcStatusName(4294967295u), "CODE_4294967295");
}

// --- JSON --------------------------------------------------------------------

constexpr char kJsonCommon[] =
    R"("id":"3:41","destination":"10.0.0.1:7001",)"
    R"("labels":{"pod":"books-1","zone":"a"},"route_labels":{"route":"GetBook"})";

TEST(FormatEventJson, EachKind) {
  EXPECT_EQ(FormatEventJson(Req()),
            std::string(R"({"kind":"req",)") + kJsonCommon +
                R"(,"method":"POST","scheme":"http","authority":"books:7001",)"
                R"("path":"/books.Library/GetBook"})"
                "\n");
  EXPECT_EQ(FormatEventJson(Rsp()), std::string(R"({"kind":"rsp",)") +
                                        kJsonCommon +
                                        R"(,"status":200,"latency_us":1234})"
                                        "\n");
  EXPECT_EQ(FormatEventJson(End()),
            std::string(R"({"kind":"end",)") + kJsonCommon +
                R"(,"latency_us":1000300,"duration_us":66,)"
                R"("response_bytes":42,"grpc_status":"OK"})"
                "\n");
  wire::TapEvent e = End();
  e.mutable_http()->mutable_response_end()->mutable_eos()->set_reset_error_code(
      2);
  AddHeader(e.mutable_http()->mutable_response_end()->mutable_trailers(),
            "grpc-message", "say \"hi\"");
  EXPECT_THAT(FormatEventJson(e),
              HasSubstr(R"("response_bytes":42,"reset_error":2,)"
                        R"("trailers":[{"name":"grpc-message",)"
                        R"("value":"say \"hi\""}]})"));
  e.clear_destination();
  EXPECT_THAT(FormatEventJson(e), HasSubstr(R"("destination":null,)"));
}

TEST(FormatEventJson, Headers) {
  wire::TapEvent e = Rsp();
  auto* headers = e.mutable_http()->mutable_response_init()->mutable_headers();
  AddHeader(headers, ":status", "200");
  AddHeader(headers, "x", "1");
  EXPECT_THAT(FormatEventJson(e),
              HasSubstr(R"("latency_us":1234,"headers":[)"
                        R"({"name":":status","value":"200"},)"
                        R"({"name":"x","value":"1"}]})"));
}

// --- flags -------------------------------------------------------------------

absl::StatusOr<TapFlags> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "mesh-tap");
  return ParseTapFlags(static_cast<int>(args.size()), args.data());
}

std::string ErrorOf(std::vector<const char*> args) {
  absl::StatusOr<TapFlags> f = Parse(std::move(args));
  if (f.ok()) return "ok";
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(f.status().message());
}

TEST(ParseTapFlags, Defaults) {
  absl::StatusOr<TapFlags> f = Parse({"127.0.0.1:4190"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->address, "127.0.0.1:4190");
  EXPECT_EQ(f->limit, 100u);
  EXPECT_FALSE(f->headers);
  EXPECT_FALSE(f->json);
  EXPECT_EQ(f->timeout, absl::InfiniteDuration());
  EXPECT_TRUE(f->labels.empty());
}

TEST(ParseTapFlags, Everything) {
  absl::StatusOr<TapFlags> f = Parse({"--authority",
                                      "books:7001",
                                      "--authority-prefix=books",
                                      "--path=/books.Library/GetBook",
                                      "--path-prefix",
                                      "/books.",
                                      "--method",
                                      "post",
                                      "--label",
                                      "zone=a",
                                      "--label=canary=",
                                      "--route",
                                      "GetBook",
                                      "--limit",
                                      "5",
                                      "--headers",
                                      "--json",
                                      "--timeout",
                                      "2.5",
                                      "[::1]:4190"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->address, "[::1]:4190");
  EXPECT_EQ(f->authority, "books:7001");
  EXPECT_EQ(f->authority_prefix, "books");
  EXPECT_EQ(f->path, "/books.Library/GetBook");
  EXPECT_EQ(f->path_prefix, "/books.");
  EXPECT_EQ(f->method, "POST");
  ASSERT_EQ(f->labels.size(), 2u);
  EXPECT_EQ(f->labels[0],
            std::make_pair(std::string("zone"), std::string("a")));
  EXPECT_EQ(f->labels[1], std::make_pair(std::string("canary"), std::string()));
  EXPECT_EQ(f->route, "GetBook");
  EXPECT_EQ(f->limit, 5u);
  EXPECT_TRUE(f->headers);
  EXPECT_TRUE(f->json);
  EXPECT_EQ(f->timeout, absl::Milliseconds(2500));
}

TEST(ParseTapFlags, Help) {
  absl::StatusOr<TapFlags> f = Parse({"--help"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help);
  EXPECT_TRUE(Parse({"-h"})->help);
  EXPECT_THAT(TapUsage("mesh-tap"), HasSubstr("usage: mesh-tap ADDR"));
}

TEST(ParseTapFlags, Errors) {
  EXPECT_THAT(ErrorOf({}), HasSubstr("ADDR is required"));
  EXPECT_THAT(ErrorOf({"a:1", "b:2"}), HasSubstr("unexpected argument 'b:2'"));
  EXPECT_THAT(ErrorOf({"localhost"}), HasSubstr("must be host:port"));
  EXPECT_THAT(ErrorOf({"h:0"}), HasSubstr("must be host:port"));
  EXPECT_THAT(ErrorOf({"h:65536"}), HasSubstr("must be host:port"));
  EXPECT_EQ(ErrorOf({"h:1", "--nope"}), "unknown flag --nope");
  EXPECT_EQ(ErrorOf({"h:1", "--limit", "0"}),
            "--limit: must be an integer 1..4294967295");
  EXPECT_EQ(ErrorOf({"h:1", "--limit=x"}),
            "--limit: must be an integer 1..4294967295");
  EXPECT_EQ(ErrorOf({"h:1", "--limit", "4294967296"}),
            "--limit: must be an integer 1..4294967295");
  EXPECT_EQ(ErrorOf({"h:1", "--timeout", "-1"}),
            "--timeout: must be a number of seconds > 0");
  EXPECT_EQ(ErrorOf({"h:1", "--timeout", "inf"}),
            "--timeout: must be a number of seconds > 0");
  EXPECT_EQ(ErrorOf({"h:1", "--label", "zone"}),
            "--label: 'zone' must be KEY=VALUE");
  EXPECT_EQ(ErrorOf({"h:1", "--label", "=a"}),
            "--label: '=a' must be KEY=VALUE");
  EXPECT_EQ(ErrorOf({"h:1", "--path-prefix", "books"}),
            "--path-prefix: 'books' must start with '/'");
  EXPECT_THAT(ErrorOf({"h:1", "--path", "/a?b=1"}),
              HasSubstr("without its query"));
  EXPECT_EQ(ErrorOf({"h:1", "--method", "GE T"}),
            "--method: 'GE T' is not an HTTP method");
  EXPECT_EQ(ErrorOf({"h:1", "--authority="}), "--authority: needs a value");
  EXPECT_EQ(ErrorOf({"h:1", "--route"}), "--route: needs a value");
  EXPECT_EQ(ErrorOf({"h:1", "--json=yes"}), "--json: takes no value");
}

// --- the request -------------------------------------------------------------

std::string TreeOf(const wire::ObserveRequest& request) {
  absl::StatusOr<TapOptions> options =
      mesh::internal::TapOptionsFromObserve(request);
  if (!options.ok()) return std::string(options.status().message());
  std::vector<std::string> leaves;
  for (const TapMatch& m : options->match.children) {
    leaves.push_back(absl::StrCat(static_cast<int>(m.kind), ":", m.key,
                                  m.key.empty() ? "" : "=", m.value));
  }
  return absl::StrCat(options->match.kind == TapMatch::Kind::kAll ? "all" : "?",
                      "[", absl::StrJoin(leaves, " "),
                      "] limit=", options->limit,
                      options->extract_headers ? " headers" : "");
}

TEST(ObserveRequestFor, NoFilterMatchesEverything) {
  wire::ObserveRequest r = ObserveRequestFor(*Parse({"h:1"}));
  EXPECT_EQ(r.limit(), 100u);
  ASSERT_TRUE(r.match().has_all());
  EXPECT_EQ(r.match().all().matches_size(), 0);
  EXPECT_FALSE(r.has_extract());
  EXPECT_EQ(TreeOf(r), "all[] limit=100");
}

TEST(ObserveRequestFor, EveryFilterInOrder) {
  wire::ObserveRequest r = ObserveRequestFor(
      *Parse({"h:1",    "--route",     "GetBook",    "--label",
              "zone=a", "--method",    "get",        "--path-prefix",
              "/b",     "--path",      "/b/c",       "--authority-prefix",
              "bo",     "--authority", "books:7001", "--label",
              "pod=p",  "--limit",     "3",          "--headers"}));
  const auto& m = r.match().all().matches();
  ASSERT_EQ(m.size(), 8);
  EXPECT_EQ(m[0].http().authority().exact(), "books:7001");
  EXPECT_EQ(m[1].http().authority().prefix(), "bo");
  EXPECT_EQ(m[2].http().path().exact(), "/b/c");
  EXPECT_EQ(m[3].http().path().prefix(), "/b");
  EXPECT_EQ(m[4].http().method().registered(), wire_http::HttpMethod::GET);
  EXPECT_EQ(m[5].destination_label().key(), "zone");
  EXPECT_EQ(m[6].destination_label().value(), "p");
  EXPECT_EQ(m[7].route_label().key(), "route");
  EXPECT_EQ(m[7].route_label().value(), "GetBook");
  EXPECT_TRUE(r.extract().http().has_headers());

  // What the server makes of it.
  using Kind = TapMatch::Kind;
  EXPECT_EQ(
      TreeOf(r),
      absl::StrCat("all[", static_cast<int>(Kind::kAuthorityExact),
                   ":books:7001 ", static_cast<int>(Kind::kAuthorityPrefix),
                   ":bo ", static_cast<int>(Kind::kPathExact), ":/b/c ",
                   static_cast<int>(Kind::kPathPrefix), ":/b ",
                   static_cast<int>(Kind::kMethod), ":GET ",
                   static_cast<int>(Kind::kDestinationLabel), ":zone=a ",
                   static_cast<int>(Kind::kDestinationLabel), ":pod=p ",
                   static_cast<int>(Kind::kRouteLabel),
                   ":route=GetBook] limit=3 headers"));
}

TEST(ObserveRequestFor, UnregisteredMethod) {
  wire::ObserveRequest r =
      ObserveRequestFor(*Parse({"h:1", "--method", "purge"}));
  EXPECT_EQ(r.match().all().matches(0).http().method().unregistered(), "PURGE");
}

// --- the server's events, printed --------------------------------------------

TEST(FormatEventLine, FromTheServersConversion) {
  TapEvent e;
  e.kind = TapEvent::Kind::kResponseEnd;
  e.base = 1;
  e.stream = 0;
  e.destination = "[::1]:7001";
  e.since_request_init = absl::Microseconds(1300);
  e.since_response_init = absl::Microseconds(200);
  e.response_bytes = 17;
  e.grpc_status = 5;
  EXPECT_EQ(
      FormatEventLine(mesh::internal::TapEventToProto(e)),
      "end id=1:0 proxy=out src=- dst=[::1]:7001 tls=false "
      "grpc-status=NOT_FOUND duration=200\xc2\xb5s response-length=17B\n");
  e.kind = TapEvent::Kind::kRequestInit;
  e.method = "GET";
  e.scheme = "http";
  e.authority = "a:1";
  e.path = "/x";
  e.headers = {{":method", "GET"}};
  EXPECT_EQ(FormatEventLine(mesh::internal::TapEventToProto(e)),
            "req id=1:0 proxy=out src=- dst=[::1]:7001 tls=false :method=GET "
            ":authority=a:1 :path=/x\n  :method: GET\n");
}

}  // namespace
}  // namespace mesh::tools
