#include "tools/mesh-call/flags.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/common/flag_parser.h"

namespace mesh::tools {
namespace {

constexpr char kUsageHead[] =
    R"(usage: %s DISCOVERY --target NAME:PORT --method /PKG.SVC/METHOD [options]
       %s DISCOVERY --target NAME:PORT --http METHOD:/PATH [options]

Sends gRPC unary calls through a mesh::Channel (or, with --http, plain HTTP
requests through libcurl and mesh::curl) and reports how they were spread
over the endpoints, their latency and their statuses.

)";

constexpr char kUsageTail[] = R"(
When the count or duration is reached, mesh-call stops starting calls and
waits for those in flight: up to the deadline plus 5 s with --deadline, up to
30 s without; calls still unanswered then are reported as not finished.
SIGINT/SIGTERM stops starting calls too; a second one stops the waiting.
Latency percentiles are nearest-rank over finished calls, whatever their
status.

Exit status: 0 when the calls ran, whatever their statuses; 1 when set-up
failed (reading --data, creating the mesh, discovery); 2 for bad flags.
)";

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(why);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> DecodeHex(absl::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool IsMetadataNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// "name: value" → {name lower-cased, value}, both trimmed. Names starting
// "grpc-" are the protocol's own (PROTOCOL-HTTP2.md) and rejected here;
// other names go to gRPC as given, even those it sets itself (content-type,
// te, user-agent).
absl::Status ParseHeader(absl::string_view text, Metadata* headers) {
  size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return Bad(absl::StrCat("'", text, "' is not 'name: value'"));
  }
  std::string name =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(text.substr(0, colon)));
  absl::string_view value = absl::StripAsciiWhitespace(text.substr(colon + 1));
  bool ok = !name.empty();
  for (char c : name) ok = ok && IsMetadataNameChar(c);
  if (!ok) {
    return Bad(
        absl::StrCat("name '", name, "' must be [0-9A-Za-z_.-] characters"));
  }
  if (absl::StartsWith(name, "grpc-")) {
    return Bad(absl::StrCat("'", name, "': grpc-* is reserved"));
  }
  if (!absl::EndsWith(name, "-bin")) {
    for (char c : value) {
      if (c < 0x20 || c > 0x7e) {
        return Bad(
            absl::StrCat("value of '", name, "' must be printable ASCII"));
      }
    }
  }
  headers->emplace_back(std::move(name), std::string(value));
  return absl::OkStatus();
}

// --static a:p,b:p: the addresses, trimmed; the last --static counts.
absl::Status ParseStatic(absl::string_view value, CallFlags* f) {
  f->static_endpoints.clear();
  for (absl::string_view a : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    f->static_endpoints.emplace_back(absl::StripAsciiWhitespace(a));
  }
  if (f->static_endpoints.empty()) return Bad("needs an address");
  return absl::OkStatus();
}

// Like the channel's own check, so that a typo fails here, not per call.
absl::Status ParseMethod(absl::string_view value, CallFlags* f) {
  size_t second = value.size() > 1 ? value.find('/', 1) : 0;
  if (value.empty() || value[0] != '/' || second == absl::string_view::npos ||
      second <= 1 || second + 1 >= value.size() ||
      value.find('/', second + 1) != absl::string_view::npos) {
    return Bad(
        absl::StrCat("'", value, "' must look like /package.Service/Method"));
  }
  f->method = std::string(value);
  return absl::OkStatus();
}

// --data HEX or --data @FILE; the last one counts.
absl::Status ParseHttp(absl::string_view value, CallFlags* f) {
  const size_t colon = value.find(':');
  if (colon == absl::string_view::npos || colon == 0 ||
      colon + 1 >= value.size() || value[colon + 1] != '/') {
    return Bad("must be METHOD:/PATH, e.g. GET:/books/1");
  }
  for (char c : value.substr(0, colon)) {
    if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) {
      return Bad("the method must be letters, e.g. GET or POST");
    }
  }
  for (char c : value.substr(colon + 1)) {
    if (c <= 0x20 || c >= 0x7f) {
      return Bad("the path must be visible ASCII (no spaces)");
    }
  }
  f->http_method = absl::AsciiStrToUpper(value.substr(0, colon));
  f->http_path = std::string(value.substr(colon + 1));
  return absl::OkStatus();
}

absl::Status ParseBody(absl::string_view value, CallFlags* f) {
  if (absl::ConsumePrefix(&value, "@")) {
    if (value.empty()) return Bad("@ needs a file name");
    f->body_file = std::string(value);
    f->body.clear();
    return absl::OkStatus();
  }
  f->body = std::string(value);
  f->body_file.clear();
  return absl::OkStatus();
}

absl::Status ParseData(absl::string_view value, CallFlags* f) {
  if (absl::ConsumePrefix(&value, "@")) {
    if (value.empty()) return Bad("@ needs a file name");
    f->data_file = std::string(value);
    f->data.clear();
    return absl::OkStatus();
  }
  std::optional<std::string> bytes = DecodeHex(value);
  if (!bytes) return Bad("must be hex digits (pairs) or @file");
  f->data = *std::move(bytes);
  f->data_file.clear();
  return absl::OkStatus();
}

absl::Status ParseBalancer(absl::string_view value, CallFlags* f) {
  if (value == "p2c") {
    f->balancer = BalancerKind::kP2cPeakEwma;
  } else if (value == "round_robin") {
    f->balancer = BalancerKind::kRoundRobin;
  } else {
    return Bad("must be p2c or round_robin");
  }
  return absl::OkStatus();
}

// --dns-server a:p,b:p: the servers, trimmed; the last --dns-server counts.
absl::Status ParseDnsServers(absl::string_view value, CallFlags* f) {
  f->dns_servers.clear();
  for (absl::string_view a :
       absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    f->dns_servers.emplace_back(absl::StripAsciiWhitespace(a));
  }
  if (f->dns_servers.empty()) return Bad("needs an address");
  return absl::OkStatus();
}

// Every flag, into `f`; `count_set` and `tls_refresh_set` tell whether
// --count and --tls-refresh were given.
FlagTable CallFlagTable(CallFlags* f, bool* count_set, bool* tls_refresh_set) {
  constexpr char kAtLeastOne[] = "must be an integer >= 1";
  constexpr char kSeconds[] = "must be a number of seconds > 0";
  return {
      FlagHeading("Discovery (exactly one):"),
      {"linkerd", "ADDR", TextFlag(&f->linkerd, "needs an address"),
       "Linkerd Destination API, e.g. 127.0.0.1:8086"},
      {"context-token", "TOKEN", TextFlag(&f->context_token),
       "with --linkerd: GetDestination.context_token"},
      {"linkerd-policy", "ADDR",
       TextFlag(&f->linkerd_policy, "needs an address"),
       "with --linkerd: Linkerd's policy controller\n"
       "(HTTPRoute/GRPCRoute routing), e.g. 127.0.0.1:8090"},
      {"source-workload", "JSON", TextFlag(&f->source_workload),
       "with --linkerd-policy: TrafficSpec.source_workload,\n"
       "e.g. {\"ns\":\"default\",\"pod\":\"web-0\"}"},
      {"linkerd-identity", "ID",
       TextFlag(&f->linkerd_identity, "needs an identity"),
       "with --linkerd and --tls-*: mutual TLS to the\n"
       "destination service, whose certificate must carry ID"},
      {"static", "A:P,B:P",
       [f](absl::string_view v) { return ParseStatic(v, f); },
       "endpoints given directly (weight 1 each)"},
      {"static-identity", "ID",
       TextFlag(&f->static_identity, "needs an identity"),
       "with --static and --tls-*: the identity each\n"
       "endpoint's certificate must carry (a DNS name, or a\n"
       "URI such as spiffe://...)"},
      {"xds-bootstrap", "FILE",
       TextFlag(&f->xds_bootstrap, "needs a bootstrap file"),
       "xDS: gRPC's bootstrap file (server, node); the\n"
       "target is a Listener name (name:port or\n"
       "xds:///name:port)"},
      {"dns", "", SwitchFlag(&f->dns),
       "DNS (A and AAAA, refreshed by TTL): the target is\n"
       "host:port, dns:///host:port or\n"
       "dns://SERVER/host:port"},
      {"dns-server", "A:P,B:P",
       [f](absl::string_view v) { return ParseDnsServers(v, f); },
       "with --dns (or --linkerd, for targets it says are\n"
       "not mesh services): the DNS servers to ask\n"
       "(default: /etc/resolv.conf's)"},

      FlagHeading("Identity (TLS to endpoints with an identity):"),
      {"tls-cert", "FILE", TextFlag(&f->tls_cert, "needs a file"),
       "this workload's certificate chain (PEM): mutual\n"
       "TLS, with --tls-key and --tls-ca"},
      {"tls-key", "FILE", TextFlag(&f->tls_key, "needs a file"),
       "its private key (PEM)"},
      {"tls-ca", "FILE", TextFlag(&f->tls_ca, "needs a file"),
       "CA certificates servers must chain to (PEM); alone,\n"
       "with --static: TLS to every endpoint, presenting no\n"
       "client certificate, the server checked against the\n"
       "CA (and --static-identity when given)"},
      {"tls-refresh", "SECONDS",
       NoteGiven(tls_refresh_set,
                 DurationFlag(&f->tls_refresh, absl::Seconds(1),
                              Lowest::kAboveZero, kSeconds)),
       "read the --tls-* files again this often (default\n"
       "60; at least 0.01); a change is taken within a\n"
       "second anyway where their directories can be\n"
       "watched (inotify)"},

      FlagHeading("Call:"),
      {"target", "NAME:PORT", TextFlag(&f->target),
       "destination to call (required)"},
      {"method", "/PKG.SVC/M",
       [f](absl::string_view v) { return ParseMethod(v, f); },
       "gRPC method (required)"},
      {"data", "HEX | @FILE",
       [f](absl::string_view v) { return ParseData(v, f); },
       "request message: hex bytes, or a file's raw bytes\n"
       "(default: the empty message)"},
      {"header", "'NAME: VALUE'",
       [f](absl::string_view v) { return ParseHeader(v, &f->headers); },
       "request metadata; repeatable; NAME is lower-cased\n"
       "(grpc-* names are reserved)"},
      {"http", "METHOD:/PATH",
       [f](absl::string_view v) { return ParseHttp(v, f); },
       "plain HTTP requests instead of gRPC calls\n"
       "(libcurl through mesh::curl; HTTP/2 to endpoints\n"
       "that speak it), e.g. GET:/books/1"},
      {"http2", "", SwitchFlag(&f->http2),
       "with --http and --static: the endpoints speak\n"
       "HTTP/2 (prior knowledge over cleartext)"},
      {"body", "TEXT | @FILE",
       [f](absl::string_view v) { return ParseBody(v, f); },
       "with --http: the request body, as given or a\n"
       "file's bytes"},
      {"deadline", "MS",
       DurationFlag(&f->deadline, absl::Milliseconds(1), Lowest::kAboveZero,
                    "must be a number of milliseconds > 0"),
       "per-call timeout in milliseconds (default: none)"},
      {"balancer", "KIND",
       [f](absl::string_view v) { return ParseBalancer(v, f); },
       "p2c or round_robin (default: p2c)"},

      FlagHeading("Load:"),
      {"count", "N",
       NoteGiven(count_set, IntFlag(&f->count, 1, kNoMax, kAtLeastOne)),
       "calls to make (default 1)"},
      {"duration", "SECONDS",
       DurationFlag(&f->duration, absl::Seconds(1), Lowest::kAboveZero,
                    kSeconds),
       "make calls for this long instead of a count"},
      {"interval", "SECONDS",
       DurationFlag(&f->interval, absl::Seconds(1), Lowest::kAboveZero,
                    kSeconds),
       "while running, print every interval a line with\n"
       "each endpoint's share of the calls that finished\n"
       "in it (to watch traffic follow discovery changes)"},
      {"concurrency", "N",
       NoteGiven(&f->concurrency_set,
                 IntFlag(&f->concurrency, 1, kNoMax, kAtLeastOne)),
       "closed loop: N calls in flight (default 1)"},
      {"rate", "N",
       RealFlag(&f->rate, Lowest::kAboveZero,
                "must be a number of calls per second > 0"),
       "open loop: start N calls per second whatever the\n"
       "completions; latency counts from each call's\n"
       "scheduled start, so queueing is not hidden. With\n"
       "--rate, --concurrency N (if given) caps the calls\n"
       "in flight: a start waits for a free slot, and the\n"
       "wait counts in its latency. Without it, no cap."},

      FlagHeading("Set-up and output:"),
      {"wait", "SECONDS",
       DurationFlag(&f->wait, absl::Seconds(1), Lowest::kZero,
                    "must be a number of seconds >= 0"),
       "wait this long for discovery before the first call\n"
       "(default 5); if no endpoint comes, exit 1. 0: call\n"
       "at once (calls wait for discovery up to 3 s each)"},
      {"json", "", SwitchFlag(&f->json),
       "print one JSON object instead of the table"},
      {"metrics", "", SwitchFlag(&f->metrics),
       "after the table, print the target's per-route\n"
       "metrics (Mesh::Metrics(), Prometheus text format)"},
      {"tap", "ADDR",
       TextFlag(&f->tap, "needs an address such as 127.0.0.1:4190"),
       "while running, serve Linkerd's tap API on ADDR\n"
       "(e.g. 127.0.0.1:4190; port 0 picks one, printed to\n"
       "stderr) for mesh-tap or linkerd viz tap"},
      {"admin", "ADDR",
       TextFlag(&f->admin, "needs an address such as 127.0.0.1:9990"),
       "while running, serve the admin page on ADDR\n"
       "(e.g. 127.0.0.1:9990; port 0 picks one; its URL is\n"
       "printed to stderr): destinations, endpoints, routes\n"
       "and live tap in a browser"},
      {"help", "", SwitchFlag(&f->help), "this text"},
  };
}

absl::Status CheckCombination(const CallFlags& f, bool count_set,
                              bool tls_refresh_set) {
  if (int{!f.linkerd.empty()} + int{!f.static_endpoints.empty()} +
          int{!f.xds_bootstrap.empty()} + int{f.dns} !=
      1) {
    return Bad(
        "give exactly one of --linkerd, --static, --xds-bootstrap and --dns");
  }
  if (!f.dns_servers.empty() && !f.dns && f.linkerd.empty()) {
    return Bad("--dns-server: goes with --dns or --linkerd");
  }
  const bool mutual = !f.tls_cert.empty() || !f.tls_key.empty();
  if (mutual && (f.tls_cert.empty() || f.tls_key.empty() || f.tls_ca.empty())) {
    return Bad("--tls-cert, --tls-key and --tls-ca go together");
  }
  if (!mutual && !f.tls_ca.empty() && f.static_endpoints.empty()) {
    // Linkerd's destination service and endpoints, like --linkerd-identity,
    // take mutual TLS; xDS's TLS is the bootstrap's; DNS gives no identity.
    return Bad(
        "--tls-ca alone (TLS without a client certificate) goes with "
        "--static; with --linkerd give --tls-cert and --tls-key too, with "
        "--xds-bootstrap the bootstrap says how to reach servers");
  }
  if (tls_refresh_set && f.tls_ca.empty()) {
    return Bad("--tls-refresh: goes with --tls-ca");
  }
  if (f.tls_refresh < absl::Milliseconds(10)) {
    return Bad("--tls-refresh: must be at least 0.01 seconds");
  }
  if (!f.static_identity.empty() &&
      (f.static_endpoints.empty() || f.tls_ca.empty())) {
    return Bad("--static-identity: goes with --static and --tls-*");
  }
  if (!f.linkerd_identity.empty() &&
      (f.linkerd.empty() || f.tls_cert.empty())) {
    return Bad("--linkerd-identity: goes with --linkerd and --tls-*");
  }
  if (!f.context_token.empty() && f.linkerd.empty()) {
    return Bad("--context-token: only goes with --linkerd");
  }
  if (!f.linkerd_policy.empty() && f.linkerd.empty()) {
    return Bad("--linkerd-policy: only goes with --linkerd");
  }
  if (!f.source_workload.empty() && f.linkerd_policy.empty()) {
    return Bad("--source-workload: only goes with --linkerd-policy");
  }
  if (f.metrics && f.json) {
    return Bad("--metrics: not with --json (its output is one JSON object)");
  }
  if (f.target.empty()) return Bad("--target: is required");
  const bool http = !f.http_method.empty();
  if (http && !f.method.empty()) {
    return Bad("--http: not with --method (a gRPC method)");
  }
  if (http && (!f.data.empty() || !f.data_file.empty())) {
    return Bad("--data: not with --http (its body is --body)");
  }
  if (f.http2 && (!http || f.static_endpoints.empty())) {
    return Bad("--http2: only goes with --http and --static");
  }
  if (!http && (!f.body.empty() || !f.body_file.empty())) {
    return Bad("--body: only goes with --http");
  }
  if (!http && f.method.empty()) {
    return Bad("--method: is required (or --http for plain HTTP)");
  }
  if (count_set && f.duration > absl::ZeroDuration()) {
    return Bad("give --count or --duration, not both");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CallFlags> ParseCallFlags(int argc, const char* const* argv) {
  CallFlags flags;
  bool count_set = false;
  bool tls_refresh_set = false;
  if (absl::Status s = ParseFlags(
          argc, argv, CallFlagTable(&flags, &count_set, &tls_refresh_set));
      !s.ok()) {
    return s;
  }
  if (flags.help) return flags;
  if (absl::Status s = CheckCombination(flags, count_set, tls_refresh_set);
      !s.ok()) {
    return s;
  }
  return flags;
}

std::string Usage(absl::string_view program) {
  CallFlags unused;
  bool unused_set = false;
  std::string head = kUsageHead;
  head.replace(head.find("%s"), 2, std::string(program));
  head.replace(head.find("%s"), 2, std::string(program));
  return absl::StrCat(
      head, FlagHelp(CallFlagTable(&unused, &unused_set, &unused_set)),
      kUsageTail);
}

}  // namespace mesh::tools
