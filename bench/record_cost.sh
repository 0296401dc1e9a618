#!/usr/bin/env bash
# What recording costs the X3 mission demo's RTF, the figure issue 21 sets (≤ 10 %): ROUNDS
# rounds of three runs of `kestrel run worlds/x3_mission.sdf --no-transport` (as fast as
# possible) — plain, with `--record` (every default channel) and plain again — and each
# recording's RTF over the mean of the two plain runs beside it. This machine's plain runs differ
# by up to 50 % from one run to the next (docs/performance.md, "Recording"), so only ratios of
# neighbouring runs, many of them, say anything: prints their median and quartiles, and the
# medians of the RTFs themselves.
#   bench/record_cost.sh [build-dir] [rounds] [extra --record options...]   (default: build 40)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
rounds="${2:-40}"
shift $(($# < 2 ? $# : 2))
kestrel="$build/src/cli/kestrel"
[ -x "$kestrel" ] || { echo "record_cost: $kestrel not built (cmake --build $build --target kestrel)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rtf() {  # the RTF of a run of the demo with ARGS
  local out
  out=$("$kestrel" run worlds/x3_mission.sdf --no-transport "$@" 2>&1) ||
    { echo "record_cost: the run failed: $(tail -2 <<< "$out")" >&2; exit 1; }
  sed -n 's/.*RTF \([0-9.]*\), .*/\1/p' <<< "$out" | tail -1
}
for i in $(seq "$rounds"); do
  echo "$(rtf) $(rtf --record "$tmp/r.mcap" "$@") $(rtf)"
done > "$tmp/rounds"
awk 'NF != 3 { exit 1 }' "$tmp/rounds" || { echo "record_cost: a run failed (above)" >&2; exit 1; }
awk '{ print $2 / (($1 + $3) / 2) }' "$tmp/rounds" | sort -g > "$tmp/ratios"
awk '{ print $1; print $3 }' "$tmp/rounds" | sort -g > "$tmp/plain"
awk '{ print $2 }' "$tmp/rounds" | sort -g > "$tmp/recorded"
q() { awk -v f="$2" '{ v[NR] = $1 } END { printf "%.3f", v[int(f * (NR - 1)) + 1] }' "$1"; }
echo "$rounds rounds: recorded / plain RTF median $(q "$tmp/ratios" 0.5)" \
     "(quartiles $(q "$tmp/ratios" 0.25), $(q "$tmp/ratios" 0.75));" \
     "RTF medians: plain $(q "$tmp/plain" 0.5), recorded $(q "$tmp/recorded" 0.5)"
