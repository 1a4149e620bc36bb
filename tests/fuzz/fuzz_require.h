// REQUIRE for the libFuzzer targets: a violated invariant prints what and
// aborts, so libFuzzer keeps the input as a crash. A macro so that the
// message is only built on failure (this runs per input).
//
//   REQUIRE(parsed.ok(), "address does not parse: ", address);
//
// Thread-compatible.
#ifndef MESH_TESTS_FUZZ_FUZZ_REQUIRE_H_
#define MESH_TESTS_FUZZ_FUZZ_REQUIRE_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace mesh::fuzz {

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "invariant violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace mesh::fuzz

#define REQUIRE(cond, ...)                                                   \
  do {                                                                       \
    if (!(cond)) ::mesh::fuzz::Fail(absl::StrCat(#cond, ": ", __VA_ARGS__)); \
  } while (0)

#endif  // MESH_TESTS_FUZZ_FUZZ_REQUIRE_H_
