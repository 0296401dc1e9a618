#!/usr/bin/env bash
# Transport benchmarks (docs/performance.md, section "Transport"). Runs itself inside
# scripts/netns (loopback only).
#   1. RTF of the project's worlds/x3_mission.sdf (an X3 with IMU, magnetometer, barometer and
#      GNSS publishing, flying its mission) as fast as possible, transport on vs --no-transport
#      (alternating runs, best of N each), with a /clock and a /stats listener attached in the
#      "listened" variant.
#   2. Service round trip: /world/W/control (pause) from another process, 200 calls.
#   usage: bench/transport_bench.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-3}
if [ "$(ip -o link show | grep -vc ': lo:')" -ne 0 ]; then
  exec "$root/scripts/netns" "$0" "$build" "$runs"
fi
kestrel=$build/src/cli/kestrel
world=$root/worlds/x3_mission.sdf
export IGN_PARTITION="kestrel_bench_$$"
dur=20

rtf() {  # rtf ARGS... -> the run's overall RTF (sim time / wall time)
  # (exit 1: the mission is not over after $dur s; the summary line is what counts)
  { "$kestrel" run "$world" --rtf 0 --duration "$dur" "$@" 2>/dev/null || true; } |
    sed -n 's/.*wall time [0-9.]* s, RTF \([0-9.]*\),.*/\1/p'
}
best() { sort -g | tail -1; }
on=() off=() listened=()
for _ in $(seq "$runs"); do
  off+=("$(rtf --no-transport)")
  on+=("$(rtf)")
  "$kestrel" topic -e -t /clock -d $((dur + 5)) >/dev/null 2>&1 &
  l1=$!
  "$kestrel" topic -e -t /stats -d $((dur + 5)) >/dev/null 2>&1 &
  l2=$!
  listened+=("$(rtf)")
  kill $l1 $l2 2>/dev/null || true
  wait $l1 $l2 2>/dev/null || true
done
b_off=$(printf '%s\n' "${off[@]}" | best)
b_on=$(printf '%s\n' "${on[@]}" | best)
b_l=$(printf '%s\n' "${listened[@]}" | best)
echo "RTF x3_mission.sdf, ${dur} s sim, as fast as possible, best of $runs:"
echo "  --no-transport          ${off[*]} -> $b_off"
echo "  transport, no listener  ${on[*]} -> $b_on  ratio $(awk -v a="$b_on" -v b="$b_off" 'BEGIN{printf "%.3f", a/b}')"
echo "  transport, /clock+/stats echoed ${listened[*]} -> $b_l  ratio $(awk -v a="$b_l" -v b="$b_off" 'BEGIN{printf "%.3f", a/b}')"

"$kestrel" run "$world" --paused --quiet &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  "$kestrel" service -l 2>/dev/null | grep -q '/control$' && break
  sleep 0.1
done
w=$("$kestrel" service -l | sed -n 's|^/world/\(.*\)/control$|\1|p' | head -1)
echo "service round trip, /world/$w/control (WorldControl pause) from another process:"
"$kestrel" service -s "/world/$w/control" --reqtype ignition.msgs.WorldControl \
  --reptype ignition.msgs.Boolean --req 'pause: true' --repeat 201 2>&1 >/dev/null
echo "service round trip, /world/$w/scene/info (built on the step thread while paused):"
"$kestrel" service -s "/world/$w/scene/info" --reqtype ignition.msgs.Empty \
  --reptype ignition.msgs.Scene --req '' --repeat 201 2>&1 >/dev/null
