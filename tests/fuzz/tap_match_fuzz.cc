// libFuzzer target for the tap match reader: the bytes of an Observe
// request (Linkerd's io.linkerd.proxy.tap.ObserveRequest, as a client
// sends them) → TapOptions (TapOptionsFromObserveBytes) → the compiled
// match (CompiledTapMatch::Compile) → evaluation on request heads. Whatever
// the bytes: a refusal is INVALID_ARGUMENT with a message; a match that
// compiles stays within kTapMaxMatchNodes, and evaluating it never crashes.
//
// Run through scripts/fuzz.sh. A violated invariant aborts with a message.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "mesh/endpoint.h"
#include "mesh/tap.h"
#include "src/tap/observe_convert.h"
#include "src/tap/tap_match.h"
#include "tests/fuzz/fuzz_require.h"

namespace {

using mesh::internal::CompiledTapMatch;
using mesh::internal::TapRequestHead;

void RequireRefusal(const absl::Status& status, absl::string_view where) {
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument, where, ": ",
          status.ToString());
  REQUIRE(!status.message().empty(), where, ": an empty message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<mesh::TapOptions> options =
      mesh::internal::TapOptionsFromObserveBytes(
          absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!options.ok()) {
    RequireRefusal(options.status(), "conversion");
    return 0;
  }
  REQUIRE(options->limit > 0, "a limit of 0 passed");
  absl::StatusOr<CompiledTapMatch> match =
      CompiledTapMatch::Compile(options->match);
  if (!match.ok()) {
    RequireRefusal(match.status(), "compile");
    return 0;
  }
  REQUIRE(match->node_count() <= mesh::kTapMaxMatchNodes, match->node_count(),
          " nodes");

  static const std::map<std::string, std::string> kRoute = {
      {"route", "GetBook"}};
  static const mesh::Endpoint kV4 = [] {
    mesh::Endpoint e{"10.1.2.3:7001"};
    e.labels = {{"zone", "a"}};
    return e;
  }();
  static const mesh::Endpoint kV6{"[fd00::1]:443"};
  static const mesh::Endpoint kBad{"not an address"};
  for (const mesh::Endpoint* endpoint : {&kV4, &kV6, &kBad}) {
    TapRequestHead head{"POST",
                        "http",
                        "books.default.svc:7001",
                        "/books.Library/GetBook?x=1",
                        endpoint,
                        &kRoute};
    (void)match->Matches(head);
  }
  TapRequestHead bare{"", "", "", "", nullptr, nullptr};
  (void)match->Matches(bare);
  return 0;
}
