#include "tools/mesh-tap/flags.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace mesh::tools {
namespace {

namespace wire = ::io::linkerd::proxy::tap;
namespace wire_http = ::io::linkerd::proxy::http_types;
using WireMatch = wire::ObserveRequest::Match;

constexpr char kUsage[] = R"(usage: %s ADDR [filters] [options]

Watches live requests an application sends through its mesh, like
`linkerd viz tap`: connects to the app's tap server (Linkerd's Tap.Observe
API, plaintext; e.g. 127.0.0.1:4190) and prints one line per event of each
request that passes every filter given.

Filters (ANDed; none: every request):
  --authority A           :authority is A
  --authority-prefix A    :authority starts with A
  --path P                the path (without the query) is P
  --path-prefix P         the path starts with P (e.g. /books.Library/)
  --method M              the HTTP method (upper-cased), e.g. POST
  --label KEY=VALUE       the endpoint has this label; repeatable
  --route NAME            the route's label route=NAME

Options:
  --limit N               requests to tap (default 100); the stream ends
                          when the last of them has finished
  --headers               also print request and response headers and
                          trailers (sensitive values come redacted)
  --json                  one JSON object per event per line
  --timeout SECONDS       stop after this long (default: when the stream
                          ends, or at SIGINT/SIGTERM)
  --help                  this text

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

// Flags that take a value; the others (--headers, --json, --help) take none.
constexpr const char* kValueFlags[] = {"authority", "authority-prefix",
                                       "path",      "path-prefix",
                                       "method",    "label",
                                       "route",     "limit",
                                       "timeout"};

bool TakesValue(absl::string_view name) {
  for (const char* f : kValueFlags) {
    if (name == f) return true;
  }
  return false;
}

absl::Status Bad(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", why));
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

absl::Status CheckPath(absl::string_view flag, absl::string_view value) {
  if (value.empty() || value[0] != '/') {
    return Bad(flag, absl::StrCat("'", value, "' must start with '/'"));
  }
  if (value.find('?') != absl::string_view::npos) {
    return Bad(flag, "matches the path without its query; drop the '?...'");
  }
  return absl::OkStatus();
}

absl::Status CheckAddress(absl::string_view address) {
  size_t colon = address.rfind(':');
  uint32_t port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port == 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ADDR '", address, "' must be host:port, e.g. 127.0.0.1:4190"));
  }
  return absl::OkStatus();
}

// Applies one flag; `value` is empty for flags that take none.
absl::Status Apply(absl::string_view name, absl::string_view value,
                   TapFlags* f) {
  if (name == "help") {
    f->help = true;
  } else if (name == "headers") {
    f->headers = true;
  } else if (name == "json") {
    f->json = true;
  } else if (name == "authority" || name == "authority-prefix") {
    if (value.empty()) return Bad(name, "needs a value");
    (name == "authority" ? f->authority : f->authority_prefix) =
        std::string(value);
  } else if (name == "path" || name == "path-prefix") {
    if (absl::Status s = CheckPath(name, value); !s.ok()) return s;
    (name == "path" ? f->path : f->path_prefix) = std::string(value);
  } else if (name == "method") {
    if (!IsToken(value)) {
      return Bad(name, absl::StrCat("'", value, "' is not an HTTP method"));
    }
    f->method = absl::AsciiStrToUpper(value);
  } else if (name == "label") {
    size_t eq = value.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return Bad(name, absl::StrCat("'", value, "' must be KEY=VALUE"));
    }
    f->labels.emplace_back(std::string(value.substr(0, eq)),
                           std::string(value.substr(eq + 1)));
  } else if (name == "route") {
    if (value.empty()) return Bad(name, "needs a route name");
    f->route = std::string(value);
  } else if (name == "limit") {
    if (!absl::SimpleAtoi(value, &f->limit) || f->limit < 1) {
      return Bad(name, "must be an integer 1..4294967295");
    }
  } else if (name == "timeout") {
    double seconds = 0;
    if (!absl::SimpleAtod(value, &seconds) || !std::isfinite(seconds) ||
        seconds <= 0) {
      return Bad(name, "must be a number of seconds > 0");
    }
    f->timeout = absl::Seconds(seconds);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  return absl::OkStatus();
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
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "-h") arg = "--help";
    if (!absl::ConsumePrefix(&arg, "--")) {
      if (has_address) {
        return absl::InvalidArgumentError(absl::StrCat("unexpected argument '",
                                                       argv[i], "' (ADDR is '",
                                                       flags.address, "')"));
      }
      flags.address = std::string(arg);
      has_address = true;
      continue;
    }
    if (arg.empty()) {
      return absl::InvalidArgumentError("unexpected argument '--'");
    }
    absl::string_view name = arg, value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (TakesValue(name)) {
      if (!has_value) {
        if (i + 1 >= argc) return Bad(name, "needs a value");
        value = argv[++i];
      }
    } else if (has_value &&
               (name == "headers" || name == "json" || name == "help")) {
      return Bad(name, "takes no value");
    }
    if (absl::Status s = Apply(name, value, &flags); !s.ok()) return s;
  }
  if (flags.help) return flags;
  if (!has_address) {
    return absl::InvalidArgumentError(
        "ADDR is required: the app's tap server, e.g. 127.0.0.1:4190");
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
  std::string usage = kUsage;
  size_t at = usage.find("%s");
  return usage.replace(at, 2, std::string(program));
}

}  // namespace mesh::tools
