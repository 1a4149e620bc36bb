"""Compile options of mesh's own C++ code (the CMake build's MESH_WARNINGS)."""

load("@system_libs//:defs.bzl", "EXTRA_COPTS")

# The generated protobuf and gRPC code is compiled without warnings, as in
# the CMake build.
GENERATED_COPTS = ["-std=c++17"] + EXTRA_COPTS

MESH_COPTS = GENERATED_COPTS + [
    "-Wall",
    "-Wextra",
    "-Werror=return-type",
]
