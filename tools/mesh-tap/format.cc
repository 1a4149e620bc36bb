#include "tools/mesh-tap/format.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/base/json_string.h"
#include "tools/common/grpc_codes.h"

namespace mesh::tools {
namespace {

namespace wire = ::io::linkerd::proxy::tap;
namespace wire_http = ::io::linkerd::proxy::http_types;
namespace wire_net = ::io::linkerd::proxy::net;
using internal::JsonString;
using WireHttp = wire::TapEvent::Http;

constexpr char kMicros[] = "\xc2\xb5s";  // "µs", as Linkerd prints it
constexpr int kLastGrpcCode = 16;        // UNAUTHENTICATED

// Printable ASCII as is, other bytes \xNN: a line stays one line.
std::string Printable(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    }
  }
  return out;
}

int64_t Micros(const google::protobuf::Duration& d) {
  return d.seconds() * 1000000 + d.nanos() / 1000;
}

std::string Method(const wire_http::HttpMethod& method) {
  switch (method.type_case()) {
    case wire_http::HttpMethod::kRegistered:
      return wire_http::HttpMethod::Registered_Name(method.registered());
    case wire_http::HttpMethod::kUnregistered:
      return method.unregistered();
    case wire_http::HttpMethod::TYPE_NOT_SET:
      break;
  }
  return "";
}

std::string Scheme(const wire_http::Scheme& scheme) {
  switch (scheme.type_case()) {
    case wire_http::Scheme::kRegistered:
      if (scheme.registered() == wire_http::Scheme::HTTP) return "http";
      if (scheme.registered() == wire_http::Scheme::HTTPS) return "https";
      break;
    case wire_http::Scheme::kUnregistered:
      return scheme.unregistered();
    case wire_http::Scheme::TYPE_NOT_SET:
      break;
  }
  return "";
}

std::string Direction(const wire::TapEvent& event) {
  switch (event.proxy_direction()) {
    case wire::TapEvent::OUTBOUND:
      return "out";
    case wire::TapEvent::INBOUND:
      return "in";
    default:
      return "-";
  }
}

std::string Tls(const wire::TapEvent& event) {
  const auto& labels = event.proxy_direction() == wire::TapEvent::INBOUND
                           ? event.source_meta().labels()
                           : event.destination_meta().labels();
  auto it = labels.find("tls");
  return it == labels.end() ? "false" : Printable(it->second);
}

std::string Id(const WireHttp::StreamId& id) {
  return absl::StrCat(id.base(), ":", id.stream());
}

// The id of whichever event `http` holds; "-" for none.
std::string IdOf(const WireHttp& http) {
  switch (http.event_case()) {
    case WireHttp::kRequestInit:
      return Id(http.request_init().id());
    case WireHttp::kResponseInit:
      return Id(http.response_init().id());
    case WireHttp::kResponseEnd:
      return Id(http.response_end().id());
    case WireHttp::EVENT_NOT_SET:
      break;
  }
  return "-";
}

void AppendHeaderLines(const wire_http::Headers& headers, std::string* out) {
  for (const wire_http::Headers::Header& h : headers.headers()) {
    absl::StrAppend(out, "  ", Printable(h.name()), ": ", Printable(h.value()),
                    "\n");
  }
}

// A JSON object of string values.
std::string JsonMap(const google::protobuf::Map<std::string, std::string>& m) {
  // Sorted, so that the output does not depend on the map's order.
  std::map<std::string, std::string> sorted(m.begin(), m.end());
  std::string out = "{";
  const char* sep = "";
  for (const auto& [k, v] : sorted) {
    absl::StrAppend(&out, sep, JsonString(k), ":", JsonString(v));
    sep = ",";
  }
  return out + "}";
}

void AppendJsonHeaders(absl::string_view field,
                       const wire_http::Headers& headers, std::string* out) {
  if (headers.headers().empty()) return;
  absl::StrAppend(out, ",\"", field, "\":[");
  const char* sep = "";
  for (const wire_http::Headers::Header& h : headers.headers()) {
    absl::StrAppend(out, sep, "{\"name\":", JsonString(h.name()),
                    ",\"value\":", JsonString(h.value()), "}");
    sep = ",";
  }
  out->push_back(']');
}

}  // namespace

std::string FormatTcpAddress(const wire_net::TcpAddress& a) {
  if (!a.has_ip()) return "-";
  // The wire's integers hold the address in network order, most
  // significant byte first; inet_ntop writes IPv6 as RFC 5952 asks.
  char text[INET6_ADDRSTRLEN] = {};
  std::string host;
  switch (a.ip().ip_case()) {
    case wire_net::IPAddress::kIpv4: {
      in_addr v4;
      v4.s_addr = htonl(a.ip().ipv4());
      inet_ntop(AF_INET, &v4, text, sizeof text);
      host = text;
      break;
    }
    case wire_net::IPAddress::kIpv6: {
      in6_addr v6;
      const uint64_t halves[2] = {a.ip().ipv6().first(), a.ip().ipv6().last()};
      for (int i = 0; i < 16; ++i) {
        v6.s6_addr[i] =
            static_cast<uint8_t>(halves[i / 8] >> (56 - 8 * (i % 8)));
      }
      inet_ntop(AF_INET6, &v6, text, sizeof text);
      host = absl::StrCat("[", text, "]");
      break;
    }
    case wire_net::IPAddress::IP_NOT_SET:
      return "-";
  }
  // The port as sent, even 0 or past 65535: this prints, it does not judge.
  return absl::StrCat(host, ":", a.port());
}

std::string GrpcStatusName(uint32_t code) {
  if (code > kLastGrpcCode) return absl::StrCat("CODE_", code);
  return GrpcCodeName(static_cast<absl::StatusCode>(code));
}

std::string FormatEventLine(const wire::TapEvent& event) {
  const WireHttp& http = event.http();
  const std::string common = absl::StrCat(
      "id=", IdOf(http), " proxy=", Direction(event),
      " src=", FormatTcpAddress(event.source()),
      " dst=", FormatTcpAddress(event.destination()), " tls=", Tls(event));
  std::string out;
  switch (http.event_case()) {
    case WireHttp::kRequestInit: {
      const WireHttp::RequestInit& init = http.request_init();
      std::string method = Method(init.method());
      absl::StrAppend(&out, "req ", common,
                      " :method=", method.empty() ? "-" : Printable(method),
                      " :authority=", Printable(init.authority()),
                      " :path=", Printable(init.path()));
      // A retry or hedge (mesh's route labels "attempt" and "hedge").
      const auto& route = event.route_meta().labels();
      if (auto a = route.find("attempt"); a != route.end()) {
        absl::StrAppend(&out, " attempt=", Printable(a->second));
        if (route.count("hedge") > 0) absl::StrAppend(&out, " hedge");
      }
      absl::StrAppend(&out, "\n");
      AppendHeaderLines(init.headers(), &out);
      break;
    }
    case WireHttp::kResponseInit: {
      const WireHttp::ResponseInit& init = http.response_init();
      absl::StrAppend(&out, "rsp ", common, " :status=", init.http_status(),
                      " latency=", Micros(init.since_request_init()), kMicros,
                      "\n");
      AppendHeaderLines(init.headers(), &out);
      break;
    }
    case WireHttp::kResponseEnd: {
      const WireHttp::ResponseEnd& end = http.response_end();
      std::string eos;
      if (end.eos().end_case() == wire::Eos::kGrpcStatusCode) {
        eos = absl::StrCat(" grpc-status=",
                           GrpcStatusName(end.eos().grpc_status_code()));
      } else if (end.eos().end_case() == wire::Eos::kResetErrorCode) {
        eos = absl::StrCat(" reset-error=", end.eos().reset_error_code());
      }
      absl::StrAppend(&out, "end ", common, eos,
                      " duration=", Micros(end.since_response_init()), kMicros,
                      " response-length=", end.response_bytes(), "B\n");
      AppendHeaderLines(end.trailers(), &out);
      break;
    }
    case WireHttp::EVENT_NOT_SET:
      absl::StrAppend(&out, "? ", common, "\n");
      break;
  }
  return out;
}

std::string FormatEventJson(const wire::TapEvent& event) {
  const WireHttp& http = event.http();
  const char* kind = "?";
  switch (http.event_case()) {
    case WireHttp::kRequestInit:
      kind = "req";
      break;
    case WireHttp::kResponseInit:
      kind = "rsp";
      break;
    case WireHttp::kResponseEnd:
      kind = "end";
      break;
    case WireHttp::EVENT_NOT_SET:
      break;
  }
  std::string destination = FormatTcpAddress(event.destination());
  std::string out =
      absl::StrCat("{\"kind\":\"", kind, "\",\"id\":", JsonString(IdOf(http)),
                   ",\"destination\":",
                   destination == "-" ? "null" : JsonString(destination),
                   ",\"labels\":", JsonMap(event.destination_meta().labels()),
                   ",\"route_labels\":", JsonMap(event.route_meta().labels()));
  switch (http.event_case()) {
    case WireHttp::kRequestInit: {
      const WireHttp::RequestInit& init = http.request_init();
      absl::StrAppend(&out, ",\"method\":", JsonString(Method(init.method())),
                      ",\"scheme\":", JsonString(Scheme(init.scheme())),
                      ",\"authority\":", JsonString(init.authority()),
                      ",\"path\":", JsonString(init.path()));
      AppendJsonHeaders("headers", init.headers(), &out);
      break;
    }
    case WireHttp::kResponseInit: {
      const WireHttp::ResponseInit& init = http.response_init();
      absl::StrAppend(&out, ",\"status\":", init.http_status(),
                      ",\"latency_us\":", Micros(init.since_request_init()));
      AppendJsonHeaders("headers", init.headers(), &out);
      break;
    }
    case WireHttp::kResponseEnd: {
      const WireHttp::ResponseEnd& end = http.response_end();
      absl::StrAppend(&out,
                      ",\"latency_us\":", Micros(end.since_request_init()),
                      ",\"duration_us\":", Micros(end.since_response_init()),
                      ",\"response_bytes\":", end.response_bytes());
      if (end.eos().end_case() == wire::Eos::kGrpcStatusCode) {
        absl::StrAppend(
            &out, ",\"grpc_status\":",
            JsonString(GrpcStatusName(end.eos().grpc_status_code())));
      } else if (end.eos().end_case() == wire::Eos::kResetErrorCode) {
        absl::StrAppend(&out,
                        ",\"reset_error\":", end.eos().reset_error_code());
      }
      AppendJsonHeaders("trailers", end.trailers(), &out);
      break;
    }
    case WireHttp::EVENT_NOT_SET:
      break;
  }
  out += "}\n";
  return out;
}

}  // namespace mesh::tools
