// mesh-tap's command line: the flags, their parsing, the --help text, and
// the ObserveRequest they ask for (every filter ANDed in one `all`).
//
//   absl::StatusOr<TapFlags> flags = ParseTapFlags(argc, argv);
//   if (!flags.ok()) { print flags.status().message(); exit 2; }
//   stub->Observe(&context, ObserveRequestFor(*flags));
//
// Thread-compatible (plain values and pure functions).
#ifndef MESH_TOOLS_MESH_TAP_FLAGS_H_
#define MESH_TOOLS_MESH_TAP_FLAGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "linkerd/tap.pb.h"

namespace mesh::tools {

struct TapFlags {
  std::string address;  // ADDR: the app's Observe server, "host:port"

  // Filters; empty ones are not part of the request. All ANDed.
  std::string authority;         // --authority: exact
  std::string authority_prefix;  // --authority-prefix
  std::string path;              // --path: exact, without the query
  std::string path_prefix;       // --path-prefix
  std::string method;            // --method, upper-cased
  // --label k=v, repeatable: destination labels, in the order given.
  std::vector<std::pair<std::string, std::string>> labels;
  std::string route;  // --route NAME: the route label route=NAME

  uint32_t limit = 100;  // --limit: requests to tap, then the stream ends
  bool headers = false;  // --headers: extract and print headers, trailers
  bool json = false;     // --json: one JSON object per event per line
  // --timeout SECONDS: stop after this long (exit 0). Infinite: until the
  // stream ends or SIGINT/SIGTERM.
  absl::Duration timeout = absl::InfiniteDuration();
  bool help = false;  // --help: print Usage() and exit 0
};

// The flags, or INVALID_ARGUMENT with a message naming the bad flag (or the
// missing or extra ADDR). argv[0] is skipped. The tools' syntax
// (tools/common/flag_parser.h): "--flag=value" and "--flag value"; a
// repeated flag other than --label keeps its last value.
absl::StatusOr<TapFlags> ParseTapFlags(int argc, const char* const* argv);

// limit, extract.http.headers with --headers, and a match `all` of one node
// per filter in this order: authority, authority prefix, path, path prefix,
// method (registered when it is one), labels, route. No filter: `all []`,
// which matches every request.
::io::linkerd::proxy::tap::ObserveRequest ObserveRequestFor(
    const TapFlags& flags);

// The --help text.
std::string TapUsage(absl::string_view program);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_MESH_TAP_FLAGS_H_
