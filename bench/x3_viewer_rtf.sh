#!/usr/bin/env bash
# The viewer's cost (docs/performance.md, "Viewer"): the X3 demo mission (worlds/x3_mission.sdf,
# as fast as possible, --no-transport) with --viewer and a Foxglove client subscribed to every
# channel (bench/viewer_subscribe_all.js) against the same mission without a viewer, alternated,
# REPEATS times (default 5); prints each pair and the median ratios (viewer / no viewer) of
#  - the RTF kestrel reports (sim time / wall time of the run). The client is started first and
#    connects within 5 ms of the viewer's socket opening, so the run has a reader from its start;
#  - the CPU RTF: sim time / CPU time (user + system, every thread) of the kestrel process,
#    loading included (the same in both), which the other programs on a loaded machine change
#    far less than the wall time.
# Needs node and the packages of test/package.json (scripts/install-deps). Run it inside
# scripts/netns (the viewer takes port 18765 of the namespace's loopback):
#   scripts/netns bench/x3_viewer_rtf.sh [build-dir] [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
repeats="${2:-5}"
kestrel="$build/src/cli/kestrel"
export NODE_PATH="$PWD/test/node_modules"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rtf() { sed -n 's/.*RTF \([0-9.]*\)[, ].*/\1/p' | tail -1; }
sim() { sed -n 's/.*sim time \([0-9.]*\) s, wall.*/\1/p' "$1" | tail -1; }
cpu() { awk '{print $1 + $2}' "$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
wall_ratios=() cpu_ratios=()
for i in $(seq "$repeats"); do
  /usr/bin/time -f "%U %S" -o "$tmp/plain.time" "$kestrel" run worlds/x3_mission.sdf --no-transport \
    >"$tmp/plain.out" 2>/dev/null
  plain=$(rtf <"$tmp/plain.out")
  node bench/viewer_subscribe_all.js 18765 >"$tmp/client.out" &
  client_pid=$!
  /usr/bin/time -f "%U %S" -o "$tmp/viewer.time" "$kestrel" run worlds/x3_mission.sdf \
    --no-transport --viewer --viewer-port 18765 >"$tmp/viewer.out" 2>/dev/null
  wait "$client_pid"
  client=$(cat "$tmp/client.out")
  viewer=$(rtf <"$tmp/viewer.out")
  s_plain=$(sim "$tmp/plain.out") s_viewer=$(sim "$tmp/viewer.out")
  c_plain=$(cpu "$tmp/plain.time") c_viewer=$(cpu "$tmp/viewer.time")
  w=$(echo "$viewer $plain" | awk '{printf "%.3f", $1 / $2}')
  c=$(echo "$s_viewer $c_viewer $s_plain $c_plain" | awk '{printf "%.3f", ($1 / $2) / ($3 / $4)}')
  wall_ratios+=("$w") cpu_ratios+=("$c")
  echo "pair $i: RTF $viewer with the viewer, $plain without (ratio $w); CPU $c_viewer s for" \
       "$s_viewer s with, $c_plain s for $s_plain s without (CPU RTF ratio $c); client: $client"
done
echo "median over $repeats pairs (viewer / no viewer): RTF ratio" \
     "$(printf '%s\n' "${wall_ratios[@]}" | median), CPU RTF ratio $(printf '%s\n' "${cpu_ratios[@]}" | median)"
