#!/usr/bin/env bash
# Turns a results folder written by scripts/bench.sh into the figures of a
# benchmarks document:
#   scripts/bench/report.sh RESULTS DOC IMAGES
# - RESULTS/micro.md and micro_goals.md from micro.json (jq, micro.jq);
# - RESULTS/goals.md: every program's NAME_goals.md in one table;
# - the plots (gnuplot, plots.gp) into RESULTS, copied into IMAGES;
# - in DOC, the text between "<!-- bench:NAME begin -->" and
#   "<!-- bench:NAME end -->" replaced by RESULTS/NAME.md, for every such
#   pair. A pair whose NAME.md is missing, or a NAME.md without its pair,
#   is an error: DOC is then left as it was.
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 RESULTS DOC IMAGES" >&2; exit 2; }
results="$1" doc="$2" images="$3"
here="$(cd "$(dirname "$0")" && pwd)"

jq -r -f "$here/micro.jq" "$results/micro.json" >"$results/micro.md"
jq -r --arg part goals -f "$here/micro.jq" "$results/micro.json" \
  >"$results/micro_goals.md"

{
  echo "| goal | measured | verdict |"
  echo "|---|---|---|"
  for part in micro tail_latency overhead memory churn tap_load stub tls \
    hedge_tail; do
    tail -n +3 "$results/${part}_goals.md"
  done
} >"$results/goals.md"

gnuplot -e "dir='$results'" "$here/plots.gp"
mkdir -p "$images"
for plot in tail_latency overhead churn hedge_tail; do
  cp "$results/$plot.png" "$images/$plot.png"
done

# Every section the document asks for must be there, and every result
# meant for it must have a place.
mapfile -t wanted < <(sed -n 's/^<!-- bench:\([a-z_]*\) begin -->$/\1/p' "$doc")
for name in "${wanted[@]}"; do
  [[ -f "$results/$name.md" ]] || { echo "report: $results/$name.md missing" >&2; exit 1; }
  grep -qx "<!-- bench:$name end -->" "$doc" ||
    { echo "report: $doc has no '<!-- bench:$name end -->'" >&2; exit 1; }
done
for name in machine goals micro tail_latency overhead memory churn tap_load \
  stub tls hedge_tail; do
  printf '%s\n' "${wanted[@]}" | grep -qx "$name" ||
    { echo "report: $doc has no '<!-- bench:$name begin -->'" >&2; exit 1; }
done

tmp="$(mktemp)"
awk -v dir="$results" '
  /^<!-- bench:[a-z_]* begin -->$/ {
    print
    print ""
    name = $0
    sub(/^<!-- bench:/, "", name)
    sub(/ begin -->$/, "", name)
    file = dir "/" name ".md"
    while ((getline line < file) > 0) print line
    close(file)
    skipping = 1
    next
  }
  /^<!-- bench:[a-z_]* end -->$/ { print ""; skipping = 0 }
  !skipping { print }
' "$doc" >"$tmp"
mv "$tmp" "$doc"
echo "report: $doc regenerated from $results (plots in $images)"
