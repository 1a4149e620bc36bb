// Editing the file a ControlPlane watches (ControlPlane::WatchFile), as the
// interop tests do: the new text replaces the file at once (written aside,
// renamed, as editors do), and ApplyConfigFile waits, bounded, until the
// control plane has applied it.
//
//   ASSERT_NO_FATAL_FAILURE(ApplyConfigFile(*cp, path, R"({"targets": {}})"));
//
// Thread-compatible.
#ifndef MESH_TESTS_SUPPORT_CONTROL_PLANE_FILE_H_
#define MESH_TESTS_SUPPORT_CONTROL_PLANE_FILE_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/test_pki.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh::testing {

// Writes `text` to `path` and waits until `cp` serves a new catalog.
inline void ApplyConfigFile(const controlplane::ControlPlane& cp,
                            const std::string& path, const std::string& text) {
  std::shared_ptr<const controlplane::XdsCatalog> before = cp.ads().catalog();
  ReplaceTextFile(path, text);
  ASSERT_TRUE(WaitFor([&] { return cp.ads().catalog() != before; }))
      << "the control plane did not apply " << text;
}

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_CONTROL_PLANE_FILE_H_
