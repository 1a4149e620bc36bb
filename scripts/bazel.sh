#!/usr/bin/env bash
# The Bazel build (docs/bazel.md), offline, from the repository root:
#   bazel build //...   the library, the tools, the unit and integration
#                       tests, the docs' code examples
#   bazel test //...    the unit tests (tests/unit)
# Installs its Debian packages first (scripts/install-deps.sh: bazel-bootstrap
# and the -dev packages). Bazel's outputs go to its output base under
# ~/.cache/bazel, nothing into the repository (.bazelrc turns the bazel-*
# symlinks off); `bazel clean --expunge` removes them.
# MESH_BAZEL_INTEGRATION=1 also runs the integration tests (real gRPC servers
# on 127.0.0.1). Extra arguments go to both bazel commands.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
jobs=$(nproc)
# The tests run every time, not from Bazel's cache of results: a test's
# inputs do not include the system's shared libraries. (Given to the build
# too, so that the test command reuses its analysis.)
flags=(--jobs="$jobs" --local_test_jobs="$jobs" --test_output=errors
  --nocache_test_results)
if [ -n "${CI:-}" ] || [ ! -t 1 ]; then
  # A log, not a terminal: plain lines, progress at most every 30 s.
  flags+=(--color=no --curses=no --show_progress_rate_limit=30)
fi

# The server is started for this run and stopped after it, so that no JVM
# outlives the script (the next run starts a new one: a few seconds).
trap 'bazel shutdown >/dev/null 2>&1 || true' EXIT

start=$SECONDS
echo "== bazel build //... (jobs=$jobs)"
bazel build "${flags[@]}" "$@" //...
echo "== bazel test //... (unit tests)"
bazel test "${flags[@]}" "$@" //...
if [ "${MESH_BAZEL_INTEGRATION:-0}" != 0 ]; then
  echo "== bazel test: integration tests"
  bazel test "${flags[@]}" --config=integration "$@" //...
fi
echo "== bazel: done in $((SECONDS - start)) s"
