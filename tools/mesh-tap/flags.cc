#include "tools/mesh-tap/flags.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/common/flag_parser.h"

namespace mesh::tools {
namespace {

namespace wire = ::io::linkerd::proxy::tap;
namespace wire_http = ::io::linkerd::proxy::http_types;
using WireMatch = wire::ObserveRequest::Match;

constexpr char kUsageHead[] = R"(usage: %s ADDR [filters] [options]

Watches live requests an application sends through its mesh, like
`linkerd viz tap`: connects to the app's tap server (Linkerd's Tap.Observe
API, plaintext; e.g. 127.0.0.1:4190) and prints one line per event of each
request that passes every filter given.

)";

constexpr char kUsageTail[] = R"(
Lines:
  req id=BASE:STREAM proxy=out src=- dst=IP:PORT tls=false :method=M
      :authority=A :path=P
  rsp id=... :status=200 latency=1234µs         (since the request)
  end id=... grpc-status=OK duration=66µs response-length=42B
      (duration: since the response began; reset-error=N for a reset)

Exit status: 0 when the stream ends, on --timeout or at SIGINT/SIGTERM;
1 when the server cannot be reached or refuses the request (its status is
printed, e.g. UNAUTHENTICATED or INVALID_ARGUMENT); 2 for bad flags.
)";

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(why);
}

// RFC 9110 §5.6.2 token characters: what a method may be made of.
bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) continue;
    if (absl::string_view("!#$%&'*+-.^_`|~").find(c) ==
        absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

// --path P or --path-prefix P into *out.
FlagSetter PathFlag(std::string* out) {
  return [out](absl::string_view value) {
    if (value.empty() || value[0] != '/') {
      return Bad(absl::StrCat("'", value, "' must start with '/'"));
    }
    if (value.find('?') != absl::string_view::npos) {
      return Bad("matches the path without its query; drop the '?...'");
    }
    *out = std::string(value);
    return absl::OkStatus();
  };
}

absl::Status ParseMethod(absl::string_view value, TapFlags* f) {
  if (!IsToken(value)) {
    return Bad(absl::StrCat("'", value, "' is not an HTTP method"));
  }
  f->method = absl::AsciiStrToUpper(value);
  return absl::OkStatus();
}

// --label KEY=VALUE, repeatable: each one is kept, in order.
absl::Status AddLabel(absl::string_view value, TapFlags* f) {
  size_t eq = value.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return Bad(absl::StrCat("'", value, "' must be KEY=VALUE"));
  }
  f->labels.emplace_back(std::string(value.substr(0, eq)),
                         std::string(value.substr(eq + 1)));
  return absl::OkStatus();
}

// ADDR, the one positional argument.
absl::Status SetAddress(absl::string_view arg, bool* has_address, TapFlags* f) {
  if (*has_address) {
    return Bad(absl::StrCat("unexpected argument '", arg, "' (ADDR is '",
                            f->address, "')"));
  }
  f->address = std::string(arg);
  *has_address = true;
  return absl::OkStatus();
}

absl::Status CheckAddress(absl::string_view address) {
  size_t colon = address.rfind(':');
  uint32_t port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port == 0 ||
      port > 65535) {
    return Bad(absl::StrCat("ADDR '", address,
                            "' must be host:port, e.g. 127.0.0.1:4190"));
  }
  return absl::OkStatus();
}

// Every flag, into `f`.
FlagTable TapFlagTable(TapFlags* f) {
  return {
      FlagHeading("Filters (ANDed; none: every request):"),
      {"authority", "A", TextFlag(&f->authority, "needs a value"),
       ":authority is A"},
      {"authority-prefix", "A", TextFlag(&f->authority_prefix, "needs a value"),
       ":authority starts with A"},
      {"path", "P", PathFlag(&f->path), "the path (without the query) is P"},
      {"path-prefix", "P", PathFlag(&f->path_prefix),
       "the path starts with P (e.g. /books.Library/)"},
      {"method", "M", [f](absl::string_view v) { return ParseMethod(v, f); },
       "the HTTP method (upper-cased), e.g. POST"},
      {"label", "KEY=VALUE",
       [f](absl::string_view v) { return AddLabel(v, f); },
       "the endpoint has this label; repeatable"},
      {"route", "NAME", TextFlag(&f->route, "needs a route name"),
       "the route's label route=NAME"},

      FlagHeading("Options:"),
      {"limit", "N",
       IntFlag(&f->limit, 1, kNoMax, "must be an integer 1..4294967295"),
       "requests to tap (default 100); the stream ends\n"
       "when the last of them has finished"},
      {"headers", "", SwitchFlag(&f->headers),
       "also print request and response headers and\n"
       "trailers (sensitive values come redacted)"},
      {"json", "", SwitchFlag(&f->json), "one JSON object per event per line"},
      {"timeout", "SECONDS",
       DurationFlag(&f->timeout, absl::Seconds(1), Lowest::kAboveZero,
                    "must be a number of seconds > 0"),
       "stop after this long (default: when the stream\n"
       "ends, or at SIGINT/SIGTERM)"},
      {"help", "", SwitchFlag(&f->help), "this text"},
  };
}

WireMatch HttpString(absl::string_view value, bool prefix, bool authority) {
  WireMatch m;
  WireMatch::Http::StringMatch* s = authority
                                        ? m.mutable_http()->mutable_authority()
                                        : m.mutable_http()->mutable_path();
  if (prefix) {
    s->set_prefix(std::string(value));
  } else {
    s->set_exact(std::string(value));
  }
  return m;
}

}  // namespace

absl::StatusOr<TapFlags> ParseTapFlags(int argc, const char* const* argv) {
  TapFlags flags;
  bool has_address = false;
  if (absl::Status s = ParseFlags(argc, argv, TapFlagTable(&flags),
                                  [&](absl::string_view arg) {
                                    return SetAddress(arg, &has_address,
                                                      &flags);
                                  });
      !s.ok()) {
    return s;
  }
  if (flags.help) return flags;
  if (!has_address) {
    return Bad("ADDR is required: the app's tap server, e.g. 127.0.0.1:4190");
  }
  if (absl::Status s = CheckAddress(flags.address); !s.ok()) return s;
  return flags;
}

wire::ObserveRequest ObserveRequestFor(const TapFlags& flags) {
  wire::ObserveRequest request;
  request.set_limit(flags.limit);
  if (flags.headers) {
    request.mutable_extract()->mutable_http()->mutable_headers();
  }
  WireMatch::Seq* all = request.mutable_match()->mutable_all();
  if (!flags.authority.empty()) {
    *all->add_matches() = HttpString(flags.authority, false, true);
  }
  if (!flags.authority_prefix.empty()) {
    *all->add_matches() = HttpString(flags.authority_prefix, true, true);
  }
  if (!flags.path.empty()) {
    *all->add_matches() = HttpString(flags.path, false, false);
  }
  if (!flags.path_prefix.empty()) {
    *all->add_matches() = HttpString(flags.path_prefix, true, false);
  }
  if (!flags.method.empty()) {
    wire_http::HttpMethod* method =
        all->add_matches()->mutable_http()->mutable_method();
    wire_http::HttpMethod::Registered registered;
    if (wire_http::HttpMethod::Registered_Parse(flags.method, &registered)) {
      method->set_registered(registered);
    } else {
      method->set_unregistered(flags.method);
    }
  }
  for (const auto& [key, value] : flags.labels) {
    WireMatch::Label* label = all->add_matches()->mutable_destination_label();
    label->set_key(key);
    label->set_value(value);
  }
  if (!flags.route.empty()) {
    WireMatch::Label* label = all->add_matches()->mutable_route_label();
    label->set_key("route");
    label->set_value(flags.route);
  }
  return request;
}

std::string TapUsage(absl::string_view program) {
  TapFlags unused;
  std::string head = kUsageHead;
  head.replace(head.find("%s"), 2, std::string(program));
  return absl::StrCat(head, FlagHelp(TapFlagTable(&unused)), kUsageTail);
}

}  // namespace mesh::tools
