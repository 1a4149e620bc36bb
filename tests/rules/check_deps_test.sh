#!/usr/bin/env bash
# The dependency rule (scripts/check-deps.py): the tree keeps to it, and the
# checker does catch a break — a model file that includes gRPC, a balancer
# file that includes the channel, a public header that includes src/, a
# model file that includes the channel's public header, a public header of
# the model that includes the channel's, a service-provider interface
# (include/mesh/spi/) that includes the channel's, a public header no part
# owns, a tool that includes the channel's internals or the model's (which
# only the control plane may) — on
# a copy of the tree, naming file, line and rule.
#
#   tests/rules/check_deps_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
check="$src/scripts/check-deps.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

"$check" "$src" || fail "the tree breaks the dependency rule"

cp -r "$src/src" "$src/include" "$src/tools" "$tmp/"
printf '#include <grpcpp/grpcpp.h>\n' >>"$tmp/src/model/endpoint.cc"
printf '#include "src/channel/destination.h"\n' >>"$tmp/src/balance/peak_ewma.cc"
printf '#include "src/model/endpoint_set.h"\n' >>"$tmp/include/mesh/endpoint.h"
printf '#include "mesh/channel.h"\n' >>"$tmp/src/model/address.cc"
printf '#include "mesh/mesh.h"\n' >>"$tmp/include/mesh/tls.h"
printf '#include "mesh/channel.h"\n' >>"$tmp/include/mesh/spi/transport.h"
printf '// nobody owns this\n' >"$tmp/include/mesh/orphan.h"
printf '// nor this\n' >"$tmp/include/mesh/spi/orphan.h"
printf '#include "src/channel/destination.h"\n' >>"$tmp/tools/mesh-call/report.cc"
printf '#include "src/model/address.h"\n' >>"$tmp/tools/mesh-tap/format.cc"
printf '#include "src/model/address.h"\n' >>"$tmp/tools/mesh-control-plane/json.cc"
got=0
"$check" "$tmp" >"$tmp/out" || got=$?
[[ "$got" -eq 1 ]] || fail "a broken tree passed (exit $got): $(cat "$tmp/out")"
grep -qE '^src/model/endpoint\.cc:[0-9]+: includes grpcpp/grpcpp\.h: src/model may not depend on grpc' "$tmp/out" ||
  fail "gRPC in the model not named: $(cat "$tmp/out")"
grep -qE '^src/balance/peak_ewma\.cc:[0-9]+: includes src/channel/destination\.h: src/balance may not depend on src/channel' "$tmp/out" ||
  fail "an edge running up not named: $(cat "$tmp/out")"
grep -qE '^include/mesh/endpoint\.h:[0-9]+: includes src/model/endpoint_set\.h: a public header of src/model may include only public headers' "$tmp/out" ||
  fail "a public header including src/ not named: $(cat "$tmp/out")"
grep -qE '^src/model/address\.cc:[0-9]+: includes mesh/channel\.h: src/model may not depend on src/channel' "$tmp/out" ||
  fail "an edge running up through a public header not named: $(cat "$tmp/out")"
grep -qE '^include/mesh/tls\.h:[0-9]+: includes mesh/mesh\.h: a public header of src/model may not depend on src/channel' "$tmp/out" ||
  fail "a public header including a higher part's not named: $(cat "$tmp/out")"
grep -qE '^include/mesh/orphan\.h: a public header with no owning part' "$tmp/out" ||
  fail "an unowned public header not named: $(cat "$tmp/out")"
grep -qE '^include/mesh/spi/transport\.h:[0-9]+: includes mesh/channel\.h: a public header of src/transport may not depend on src/channel' "$tmp/out" ||
  fail "an interface header including a higher part's not named: $(cat "$tmp/out")"
grep -qE '^include/mesh/spi/orphan\.h: a public header with no owning part' "$tmp/out" ||
  fail "an unowned interface header not named: $(cat "$tmp/out")"
grep -qE '^tools/mesh-call/report\.cc:[0-9]+: includes src/channel/destination\.h: a tool may use mesh.s public headers only' "$tmp/out" ||
  fail "a tool reaching into the channel not named: $(cat "$tmp/out")"
grep -qE '^tools/mesh-tap/format\.cc:[0-9]+: includes src/model/address\.h: a tool may use' "$tmp/out" ||
  fail "a tool reaching into the model not named: $(cat "$tmp/out")"
if grep -q '^tools/mesh-control-plane/json\.cc' "$tmp/out"; then
  fail "the control plane was refused the model: $(cat "$tmp/out")"
fi
grep -q "10 break(s) of the rule" "$tmp/out" || fail "count: $(cat "$tmp/out")"
echo PASS
