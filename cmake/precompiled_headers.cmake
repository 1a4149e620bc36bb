# Precompiled headers for the headers nearly every file of a group pulls in
# (gRPC, protobuf, Abseil, the standard library; GoogleTest in the tests):
# with clang a file then skips 1-3 s of parsing them again. Off by default.
# The test command turns it on in its clang trees only: gcc here loads its
# (much larger) precompiled header in about the time it takes to parse the
# headers, so its build was no faster (a cold build: 1,391 s of compiling
# with them against 1,233 s without). Its gcc tree (every file) and Bazel
# compile each file with its own includes only, so a missing include is
# still caught.
#
# One header is compiled per group, in the group's first target, and the
# others reuse it. A group is targets compiled with the same flags (a
# precompiled header made with other flags is refused: an error with clang,
# an -Winvalid-pch warning with gcc).
option(MESH_PRECOMPILE_HEADERS
  "Precompile the gRPC, protobuf, Abseil and GoogleTest headers (faster builds)" OFF)

set(MESH_PCH_COMMON_HEADERS
  <algorithm> <atomic> <chrono> <cstdint> <functional> <map> <memory>
  <optional> <string> <thread> <utility> <vector>
  [["absl/container/flat_hash_map.h"]] [["absl/status/status.h"]]
  [["absl/status/statusor.h"]] [["absl/strings/str_cat.h"]]
  [["absl/strings/string_view.h"]] [["absl/synchronization/mutex.h"]]
  [["absl/time/clock.h"]] [["absl/time/time.h"]]
  <google/protobuf/message.h> <grpcpp/grpcpp.h>)
set(MESH_PCH_PROTO_HEADERS
  <google/protobuf/generated_message_reflection.h>
  <google/protobuf/generated_message_util.h>
  <google/protobuf/extension_set.h> <google/protobuf/reflection_ops.h>
  <google/protobuf/wire_format.h> <google/protobuf/wire_format_lite.h>
  <grpcpp/impl/codegen/async_stream.h> <grpcpp/impl/codegen/sync_stream.h>
  <grpcpp/impl/codegen/client_callback.h>
  <grpcpp/impl/codegen/server_callback_handlers.h>)
set(MESH_PCH_TEST_HEADERS ${MESH_PCH_COMMON_HEADERS} <gmock/gmock.h>
  <gtest/gtest.h>)

# mesh_precompile_headers(HEADERS <header>... TARGETS <first> <other>...):
# <first> compiles the headers, the others reuse them.
# mesh_precompile_headers(REUSE <holder> TARGETS <target>...): the targets
# reuse what <holder> compiled.
function(mesh_precompile_headers)
  if(NOT MESH_PRECOMPILE_HEADERS)
    return()
  endif()
  cmake_parse_arguments(P "" "REUSE" "HEADERS;TARGETS" ${ARGN})
  set(holder ${P_REUSE})
  if(NOT holder)
    list(POP_FRONT P_TARGETS holder)
    target_precompile_headers(${holder} PRIVATE ${P_HEADERS})
    target_compile_options(${holder} PRIVATE
      $<$<CXX_COMPILER_ID:GNU>:-Winvalid-pch>)
  endif()
  foreach(target ${P_TARGETS})
    target_precompile_headers(${target} REUSE_FROM ${holder})
    target_compile_options(${target} PRIVATE
      $<$<CXX_COMPILER_ID:GNU>:-Winvalid-pch>)
  endforeach()
endfunction()
