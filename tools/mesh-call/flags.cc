#include "tools/mesh-call/flags.h"

#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace mesh::tools {
namespace {

constexpr char kUsage[] =
    R"(usage: %s DISCOVERY --target NAME:PORT --method /PKG.SVC/METHOD [options]

Sends gRPC unary calls through a mesh::Channel and reports how they were
spread over the endpoints, their latency and their statuses.

Discovery (exactly one):
  --linkerd ADDR          Linkerd Destination API, e.g. 127.0.0.1:8086
  --context-token TOKEN   with --linkerd: GetDestination.context_token
  --static A:P,B:P        endpoints given directly (weight 1 each)
  --xds-bootstrap FILE    xDS (not yet available)

Call:
  --target NAME:PORT      destination to call (required)
  --method /PKG.SVC/M     gRPC method (required)
  --data HEX | @FILE      request message: hex bytes, or a file's raw bytes
                          (default: the empty message)
  --header 'NAME: VALUE'  request metadata; repeatable; NAME is lower-cased
                          (grpc-* names are reserved)
  --deadline MS           per-call timeout in milliseconds (default: none)
  --balancer p2c|round_robin   (default: p2c)

Load:
  --count N               calls to make (default 1)
  --duration SECONDS      make calls for this long instead of a count
  --interval SECONDS      while running, print every interval a line with
                          each endpoint's share of the calls that finished
                          in it (to watch traffic follow discovery changes)
  --concurrency N         closed loop: N calls in flight (default 1)
  --rate N                open loop: start N calls per second whatever the
                          completions; latency counts from each call's
                          scheduled start, so queueing is not hidden. With
                          --rate, --concurrency N (if given) caps the calls
                          in flight: a start waits for a free slot, and the
                          wait counts in its latency. Without it, no cap.

Set-up and output:
  --wait SECONDS          wait this long for discovery before the first call
                          (default 5); if no endpoint comes, exit 1. 0: call
                          at once (calls wait for discovery up to 3 s each)
  --json                  print one JSON object instead of the table
  --metrics               after the table, print the target's per-route
                          metrics (Mesh::Metrics(), Prometheus text format)
  --tap ADDR              while running, serve Linkerd's tap API on ADDR
                          (e.g. 127.0.0.1:4190; port 0 picks one, printed to
                          stderr) for mesh-tap or linkerd viz tap
  --help                  this text

When the count or duration is reached, mesh-call stops starting calls and
waits for those in flight: up to the deadline plus 5 s with --deadline, up to
30 s without; calls still unanswered then are reported as not finished.
SIGINT/SIGTERM stops starting calls too; a second one stops the waiting.
Latency percentiles are nearest-rank over finished calls, whatever their
status.

Exit status: 0 when the calls ran, whatever their statuses; 1 when set-up
failed (reading --data, creating the mesh, discovery); 2 for bad flags.
)";

// Flags that take a value; the others (--json, --metrics, --help) take none.
constexpr const char* kValueFlags[] = {
    "linkerd",  "context-token", "static",      "xds-bootstrap",
    "target",   "method",        "data",        "header",
    "count",    "duration",      "concurrency", "rate",
    "deadline", "balancer",      "wait",        "interval",
    "tap"};

bool TakesValue(absl::string_view name) {
  for (const char* f : kValueFlags) {
    if (name == f) return true;
  }
  return false;
}

absl::Status Bad(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", why));
}

// A finite number > 0 (or >= 0 with `allow_zero`).
std::optional<double> PositiveDouble(absl::string_view text,
                                     bool allow_zero = false) {
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || !std::isfinite(v)) return std::nullopt;
  if (v < 0 || (v == 0 && !allow_zero)) return std::nullopt;
  return v;
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
    return Bad("header", absl::StrCat("'", text, "' is not 'name: value'"));
  }
  std::string name =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(text.substr(0, colon)));
  absl::string_view value = absl::StripAsciiWhitespace(text.substr(colon + 1));
  bool ok = !name.empty();
  for (char c : name) ok = ok && IsMetadataNameChar(c);
  if (!ok) {
    return Bad("header", absl::StrCat("name '", name,
                                      "' must be [0-9A-Za-z_.-] characters"));
  }
  if (absl::StartsWith(name, "grpc-")) {
    return Bad("header", absl::StrCat("'", name, "': grpc-* is reserved"));
  }
  if (!absl::EndsWith(name, "-bin")) {
    for (char c : value) {
      if (c < 0x20 || c > 0x7e) {
        return Bad("header", absl::StrCat("value of '", name,
                                          "' must be printable ASCII"));
      }
    }
  }
  headers->emplace_back(std::move(name), std::string(value));
  return absl::OkStatus();
}

// Applies one flag; `value` is empty for flags that take none.
absl::Status Apply(absl::string_view name, absl::string_view value,
                   CallFlags* f) {
  if (name == "help") {
    f->help = true;
  } else if (name == "json") {
    f->json = true;
  } else if (name == "metrics") {
    f->metrics = true;
  } else if (name == "tap") {
    if (value.empty())
      return Bad(name, "needs an address such as 127.0.0.1:4190");
    f->tap = std::string(value);
  } else if (name == "linkerd") {
    if (value.empty()) return Bad(name, "needs an address");
    f->linkerd = std::string(value);
  } else if (name == "context-token") {
    f->context_token = std::string(value);
  } else if (name == "static") {
    f->static_endpoints.clear();
    for (absl::string_view a : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      f->static_endpoints.emplace_back(absl::StripAsciiWhitespace(a));
    }
    if (f->static_endpoints.empty()) return Bad(name, "needs an address");
  } else if (name == "xds-bootstrap") {
    return Bad(name, "xDS discovery is not yet available");
  } else if (name == "target") {
    f->target = std::string(value);
  } else if (name == "method") {
    // Like the channel's own check, so that a typo fails here, not per call.
    size_t second = value.size() > 1 ? value.find('/', 1) : 0;
    if (value.empty() || value[0] != '/' || second == absl::string_view::npos ||
        second <= 1 || second + 1 >= value.size() ||
        value.find('/', second + 1) != absl::string_view::npos) {
      return Bad(
          name,
          absl::StrCat("'", value, "' must look like /package.Service/Method"));
    }
    f->method = std::string(value);
  } else if (name == "data") {
    if (absl::ConsumePrefix(&value, "@")) {
      if (value.empty()) return Bad(name, "@ needs a file name");
      f->data_file = std::string(value);
      f->data.clear();
    } else {
      std::optional<std::string> bytes = DecodeHex(value);
      if (!bytes) return Bad(name, "must be hex digits (pairs) or @file");
      f->data = *std::move(bytes);
      f->data_file.clear();
    }
  } else if (name == "header") {
    return ParseHeader(value, &f->headers);
  } else if (name == "count") {
    if (!absl::SimpleAtoi(value, &f->count) || f->count < 1) {
      return Bad(name, "must be an integer >= 1");
    }
  } else if (name == "duration") {
    std::optional<double> s = PositiveDouble(value);
    if (!s) return Bad(name, "must be a number of seconds > 0");
    f->duration = absl::Seconds(*s);
  } else if (name == "interval") {
    std::optional<double> s = PositiveDouble(value);
    if (!s) return Bad(name, "must be a number of seconds > 0");
    f->interval = absl::Seconds(*s);
  } else if (name == "concurrency") {
    if (!absl::SimpleAtoi(value, &f->concurrency) || f->concurrency < 1) {
      return Bad(name, "must be an integer >= 1");
    }
    f->concurrency_set = true;
  } else if (name == "rate") {
    std::optional<double> r = PositiveDouble(value);
    if (!r) return Bad(name, "must be a number of calls per second > 0");
    f->rate = *r;
  } else if (name == "deadline") {
    std::optional<double> ms = PositiveDouble(value);
    if (!ms) return Bad(name, "must be a number of milliseconds > 0");
    f->deadline = absl::Milliseconds(*ms);
  } else if (name == "balancer") {
    if (value == "p2c") {
      f->balancer = BalancerKind::kP2cPeakEwma;
    } else if (value == "round_robin") {
      f->balancer = BalancerKind::kRoundRobin;
    } else {
      return Bad(name, "must be p2c or round_robin");
    }
  } else if (name == "wait") {
    std::optional<double> s = PositiveDouble(value, /*allow_zero=*/true);
    if (!s) return Bad(name, "must be a number of seconds >= 0");
    f->wait = absl::Seconds(*s);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  return absl::OkStatus();
}

absl::Status CheckCombination(const CallFlags& f, bool count_set) {
  if (f.linkerd.empty() == f.static_endpoints.empty()) {
    return absl::InvalidArgumentError(
        "give exactly one of --linkerd and --static");
  }
  if (!f.context_token.empty() && f.linkerd.empty()) {
    return Bad("context-token", "only goes with --linkerd");
  }
  if (f.metrics && f.json) {
    return Bad("metrics", "not with --json (its output is one JSON object)");
  }
  if (f.target.empty()) return Bad("target", "is required");
  if (f.method.empty()) return Bad("method", "is required");
  if (count_set && f.duration > absl::ZeroDuration()) {
    return absl::InvalidArgumentError("give --count or --duration, not both");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CallFlags> ParseCallFlags(int argc, const char* const* argv) {
  CallFlags flags;
  bool count_set = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "-h") arg = "--help";
    if (!absl::ConsumePrefix(&arg, "--") || arg.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", argv[i], "'"));
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
               (name == "json" || name == "help" || name == "metrics")) {
      return Bad(name, "takes no value");
    }
    if (absl::Status s = Apply(name, value, &flags); !s.ok()) return s;
    count_set = count_set || name == "count";
  }
  if (flags.help) return flags;
  if (absl::Status s = CheckCombination(flags, count_set); !s.ok()) return s;
  return flags;
}

std::string Usage(absl::string_view program) {
  std::string usage = kUsage;
  size_t at = usage.find("%s");
  return usage.replace(at, 2, std::string(program));
}

}  // namespace mesh::tools
